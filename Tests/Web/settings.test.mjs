import assert from "node:assert/strict";
import { test } from "node:test";
import { web } from "./page.mjs";

const settings = await import(new URL("settings.js", web).href);
const stats = await import(new URL("stats.js", web).href);
const scheme = await import(new URL("scheme.js", web).href);

test("withoutTheme: the conversation's address keeps its other parameters, drops every theme=, escapes the id", () => {
  assert.equal(settings.withoutTheme("?theme=sms", "3"), "/c/3");
  assert.equal(settings.withoutTheme("?at=12&theme=sms&q=fox+tonight", "3"), "/c/3?at=12&q=fox+tonight");
  assert.equal(settings.withoutTheme("?theme=a&theme=b", "3"), "/c/3");
  assert.equal(settings.withoutTheme("", "3/../x"), "/c/3%2F..%2Fx");
});

test("zoneRedirect: the browser's zone unless one was chosen, the same, or unknown", () => {
  assert.equal(stats.zoneRedirect("", "Europe/Paris", "UTC"), "?tz=Europe%2FParis");
  assert.equal(stats.zoneRedirect("?x=1", "America/New_York", "UTC"), "?x=1&tz=America%2FNew_York");
  assert.equal(stats.zoneRedirect("?tz=UTC", "Europe/Paris", "UTC"), null, "a zone chosen stays");
  assert.equal(stats.zoneRedirect("?tz=", "Europe/Paris", "UTC"), null, "even an empty one");
  assert.equal(stats.zoneRedirect("", "UTC", "UTC"), null);
  assert.equal(stats.zoneRedirect("", "Etc/UTC", "GMT"), null, "UTC by another name");
  assert.equal(stats.zoneRedirect("", "Europe/London", "GMT"), "?tz=Europe%2FLondon", "London is not UTC all year");
  assert.equal(stats.zoneRedirect("", "", "UTC"), null);
});

test("chartURL: the column's width within what the server draws, dark when the page is", () => {
  assert.equal(stats.chartURL("/s.svg?tz=UTC", 358.4, false), "/s.svg?tz=UTC&width=358");
  assert.equal(stats.chartURL("/s.svg?tz=UTC", 120, true), "/s.svg?tz=UTC&width=300&dark=1");
  assert.equal(stats.chartURL("/s.svg?tz=UTC", 5000, false), "/s.svg?tz=UTC&width=1200");
});

test("chosenScheme: the server's setting, then this browser's, else the system's", () => {
  assert.equal(scheme.chosenScheme("dark", "light"), "dark");
  assert.equal(scheme.chosenScheme(undefined, "light"), "light");
  assert.equal(scheme.chosenScheme("", "nonsense"), null);
  assert.equal(scheme.chosenScheme("<b>", null), null);
});
