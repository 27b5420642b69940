#!/usr/bin/env python3
"""Writes the Messenger, Instagram and Discord fixtures the way the apps write them.

Meta's "Download your information" escapes every UTF-8 byte of a string as its own \\u00XX
(mojibake): json.dumps(ensure_ascii=True) of each string's UTF-8 bytes read as Latin-1 does the
same. Each thread file lists its messages newest first; a long thread is split over message_1.json
(newest), message_2.json, … DiscordChatExporter writes relaxed JSON (emoji and accents raw),
times as ISO 8601 with the exporter's offset, and `[part N]` files for a split channel.

Run from this folder: python3 make-meta-discord.py (rewrites meta-*/ and discord/)."""
import json, os, shutil

HERE = os.path.dirname(os.path.abspath(__file__))
MEDIA = os.path.join(HERE, "media")


def mojibake(value):
    if isinstance(value, str):
        return value.encode("utf-8").decode("latin-1")
    if isinstance(value, list):
        return [mojibake(v) for v in value]
    if isinstance(value, dict):
        return {k: mojibake(v) for k, v in value.items()}
    return value


def write_meta(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="ascii") as f:
        json.dump(mojibake(obj), f, indent=2, ensure_ascii=True)


def copy(src, dst):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copyfile(os.path.join(MEDIA, src), dst)


def reset(folder):
    path = os.path.join(HERE, folder)
    shutil.rmtree(path, ignore_errors=True)
    return path


T0 = 1_700_000_000_000  # 2023-11-14T22:13:20Z, in milliseconds

# Facebook, newer layout: your_activity_across_facebook/messages/inbox/…, a thread over two files.
root = reset("meta-facebook")
thread = "your_activity_across_facebook/messages/inbox/annlee_10158"
newest = [  # message_1.json: the newest messages, newest first
    {"sender_name": "Ann Lee", "timestamp_ms": T0 + 9_000, "content": "Ann Lee unsent a message", "is_unsent": True},
    {"sender_name": "Zoë Martin", "timestamp_ms": T0 + 8_000, "content": "Look https://example.org/trip",
     "share": {"link": "https://example.org/trip", "share_text": "Trip"}},
    {"sender_name": "Ann Lee", "timestamp_ms": T0 + 7_000, "content": "Ann Lee started a call.", "call_duration": 125, "type": "Call"},
    {"sender_name": "Ann Lee", "timestamp_ms": T0 + 6_000,
     "photos": [{"uri": thread + "/photos/orientation-6.jpg", "creation_timestamp": 1_700_000_006}]},
    {"sender_name": "Zoë Martin", "timestamp_ms": T0 + 5_000, "content": "Привет 👋 مرحبا",
     "reactions": [{"reaction": "❤️", "actor": "Ann Lee"}, {"reaction": "😂", "actor": "Zoë Martin"}]},
]
older = [  # message_2.json: the older ones, newest first
    {"sender_name": "Ann Lee", "timestamp_ms": T0 + 4_000, "content": "Café at 5?"},
    {"sender_name": "Ann Lee", "timestamp_ms": T0 + 3_000,
     "audio_files": [{"uri": thread + "/audio/PTT-20211014-WA0004.opus", "creation_timestamp": 1_700_000_003}]},
    {"sender_name": "Zoë Martin", "timestamp_ms": T0 + 2_000, "content": "Zoë Martin sent an attachment.",
     "files": [{"uri": thread + "/files/Trip plan.pdf", "creation_timestamp": 1_700_000_002}]},
    {"sender_name": "Zoë Martin", "timestamp_ms": T0 + 1_000, "sticker": {"uri": "your_activity_across_facebook/messages/stickers_used/sticker.webp"}},
    {"sender_name": "Ann Lee", "timestamp_ms": T0, "content": "Hi Zoë!"},
]
head = {"participants": [{"name": "Ann Lee"}, {"name": "Zoë Martin"}]}
tail = {"title": "Ann Lee", "is_still_participant": True, "thread_path": "inbox/annlee_10158", "magic_words": [], "joinable_mode": {"mode": 1, "link": ""}}
write_meta(os.path.join(root, thread, "message_1.json"), {**head, "messages": newest, **tail})
write_meta(os.path.join(root, thread, "message_2.json"), {**head, "messages": older, **tail})
copy("orientation-6.jpg", os.path.join(root, thread, "photos/orientation-6.jpg"))
copy("PTT-20211014-WA0004.opus", os.path.join(root, thread, "audio/PTT-20211014-WA0004.opus"))
copy("Trip plan.pdf", os.path.join(root, thread, "files/Trip plan.pdf"))
copy("STK-20211014-WA0005.webp", os.path.join(root, "your_activity_across_facebook/messages/stickers_used/sticker.webp"))
write_meta(os.path.join(root, "personal_information/profile_information/profile_information.json"),
           {"profile_v2": {"name": {"full_name": "Zoë Martin", "first_name": "Zoë", "last_name": "Martin"}}})
# A group in the archive: members added and leaving, a missed call.
group = "your_activity_across_facebook/messages/archived_threads/hikingclub_2024"
write_meta(os.path.join(root, group, "message_1.json"), {
    "participants": [{"name": "Zoë Martin"}, {"name": "Kai Weber"}, {"name": "Ann Lee"}],
    "messages": [
        {"sender_name": "Kai Weber", "timestamp_ms": T0 + 50_000, "content": "Kai Weber left the group.", "type": "Unsubscribe", "users": [{"name": "Kai Weber"}]},
        {"sender_name": "Kai Weber", "timestamp_ms": T0 + 40_000, "content": "You missed a call from Kai Weber.", "call_duration": 0, "type": "Call"},
        {"sender_name": "Zoë Martin", "timestamp_ms": T0 + 30_000, "type": "Subscribe", "users": [{"name": "Kai Weber"}]},
        {"sender_name": "Zoë Martin", "timestamp_ms": T0 + 20_000, "content": "Wanderung am Sonntag? Größe egal 🙂"},
    ],
    "title": "Hiking Club ⛰️", "is_still_participant": True, "thread_path": "archived_threads/hikingclub_2024"})

# Facebook, older layout: messages/inbox/… at the root, one message.json-era file, thread_type.
root = reset("meta-facebook-old")
write_meta(os.path.join(root, "messages/inbox/kaiweber_77/message_1.json"), {
    "participants": [{"name": "Kai Weber"}, {"name": "Ann Lee"}],
    "messages": [
        {"sender_name": "Ann Lee", "timestamp_ms": 1_500_000_060_000, "content": "Bis morgen!", "type": "Generic"},
        {"sender_name": "Kai Weber", "timestamp_ms": 1_500_000_000_000, "content": "Schöne Grüße aus Köln", "type": "Generic"},
    ],
    "title": "Kai Weber", "is_still_participant": True, "thread_type": "Regular", "thread_path": "inbox/KaiWeber_77"})

# Instagram: your_instagram_activity/messages/inbox/…, reactions written as messages.
root = reset("meta-instagram")
thread = "your_instagram_activity/messages/inbox/kai_17841400"
write_meta(os.path.join(root, thread, "message_1.json"), {
    "participants": [{"name": "kai.weber"}, {"name": "Zoë"}],
    "messages": [
        {"sender_name": "kai.weber", "timestamp_ms": T0 + 6_000, "content": "Liked a message", "is_geoblocked_for_viewer": False},
        {"sender_name": "Zoë", "timestamp_ms": T0 + 5_000, "content": "Reacted 😂 to your message ", "is_geoblocked_for_viewer": False},
        {"sender_name": "kai.weber", "timestamp_ms": T0 + 4_000, "content": "Ha reaccionado con 🔥 a tu mensaje", "is_geoblocked_for_viewer": False},
        {"sender_name": "Zoë", "timestamp_ms": T0 + 3_000, "content": "Sunset at the lake 🌅", "is_geoblocked_for_viewer": False},
        {"sender_name": "kai.weber", "timestamp_ms": T0 + 2_000, "content": "I reacted to your message, it was funny", "is_geoblocked_for_viewer": False},
        {"sender_name": "kai.weber", "timestamp_ms": T0 + 1_000,
         "photos": [{"uri": thread + "/photos/photo.gif", "creation_timestamp": 1_700_000_001}], "is_geoblocked_for_viewer": False},
    ],
    "title": "kai.weber", "is_still_participant": True, "thread_path": "inbox/kai_17841400", "magic_words": []})
copy("photo.gif", os.path.join(root, thread, "photos/photo.gif"))
write_meta(os.path.join(root, "personal_information/personal_information/personal_information.json"), {
    "profile_user": [{"media_map_data": {}, "string_map_data": {"Name": {"href": "", "value": "Zoë", "timestamp": 0},
                                                                "Username": {"href": "", "value": "zoe.martin", "timestamp": 0}}}]})

# Messenger's separate download of end-to-end encrypted chats: flat files, camelCase, real UTF-8.
root = reset("meta-messenger-e2ee")
os.makedirs(root)
with open(os.path.join(root, "annlee_1.json"), "w", encoding="utf-8") as f:
    json.dump({"participants": ["Ann Lee", "Zoë Martin"], "threadName": "Ann Lee", "messages": [
        {"isUnsent": False, "media": [{"uri": "media/orientation-3.jpg"}], "reactions": [], "senderName": "Ann Lee",
         "text": "", "timestamp": T0 + 2_000, "type": "media"},
        {"isUnsent": False, "media": [], "reactions": [{"reaction": "👍", "actor": "Ann Lee"}], "senderName": "Zoë Martin",
         "text": "Grüße 🇩🇪", "timestamp": T0 + 1_000, "type": "text"},
    ]}, f, ensure_ascii=False, indent=2)
copy("orientation-3.jpg", os.path.join(root, "media/orientation-3.jpg"))

# DiscordChatExporter: a DM, a group DM, and a server channel split into two parts.
root = reset("discord")
files = "Direct Messages - ann [1001].json_Files"


def author(uid, name, nickname=None, avatar=None):
    return {"id": uid, "name": name, "discriminator": "0000", "nickname": nickname or name, "color": None, "isBot": False,
            "roles": [], "avatarUrl": avatar or f"https://cdn.discordapp.com/embed/avatars/{int(uid) % 5}.png"}


ann = author("501", "ann", "Ann", files + "/avatar-ann.png")
zoe = author("502", "zoe", "Zoë")
kai = author("503", "kai", "Kai")


def message(mid, kind, ts, who, content="", **extra):
    out = {"id": mid, "type": kind, "timestamp": ts, "timestampEdited": None, "callEndedTimestamp": None, "isPinned": False,
           "content": content, "author": who, "attachments": [], "embeds": [], "stickers": [], "reactions": [], "mentions": []}
    out.update(extra)
    return out


def write_discord(name, guild, channel, messages):
    with open(os.path.join(root, name), "w", encoding="utf-8") as f:
        json.dump({"guild": guild, "channel": channel, "dateRange": {"after": None, "before": None},
                   "exportedAt": "2024-03-01T12:00:00.000+01:00", "messages": messages, "messageCount": len(messages)},
                  f, ensure_ascii=False, indent=2)


os.makedirs(root)
dm_guild = {"id": "0", "name": "Direct Messages", "iconUrl": "https://cdn.discordapp.com/embed/avatars/0.png"}
write_discord("Direct Messages - ann [1001].json", dm_guild,
              {"id": "1001", "type": "DirectTextChat", "categoryId": "0", "category": "Private", "name": "ann", "topic": None}, [
    message("110000000000000001", "Default", "2024-02-29T21:20:31.49+01:00", ann, "**Hi** Zoë, *see* ||the end|| `now` ~~later~~ __really__"),
    message("110000000000000002", "Reply", "2024-02-29T21:21:00+01:00", zoe, "> quoted line\nyes <@501> :)",
            reference={"messageId": "110000000000000001", "channelId": "1001", "guildId": None},
            mentions=[{"id": "501", "name": "ann", "discriminator": "0000", "nickname": "Ann", "isBot": False}],
            timestampEdited="2024-02-29T21:25:00.123+01:00",
            reactions=[{"emoji": {"id": None, "name": "❤️", "code": "heart", "isAnimated": False, "imageUrl": "x"}, "count": 2}]),
    message("110000000000000003", "Default", "2024-02-29T21:22:00+01:00", ann, "photo and a remote file", attachments=[
        {"id": "9", "url": files + "/orientation-1-9A1B.jpg", "fileName": "orientation-1.jpg", "fileSizeBytes": 1234},
        {"id": "10", "url": "https://cdn.discordapp.com/attachments/1/10/notes.pdf", "fileName": "notes.pdf", "fileSizeBytes": 5555}]),
    message("110000000000000004", "Default", "2024-02-29T21:23:00Z", zoe, "https://example.org/post", embeds=[
        {"title": "A post title", "url": "https://example.org/post", "timestamp": None, "description": "What the post **says**.",
         "color": None, "thumbnail": None, "images": [], "fields": []}]),
    message("110000000000000005", "Call", "2024-02-29T21:30:00+01:00", ann, callEndedTimestamp="2024-02-29T21:32:05+01:00"),
    message("110000000000000006", "ChannelPinnedMessage", "2024-02-29T21:33:00+01:00", zoe, "Pinned a message."),
    message("110000000000000007", "Default", "2024-02-29T21:34:00+01:00", zoe, "```swift\nlet x = 1\n```", isPinned=True),
])
os.makedirs(os.path.join(root, files))
shutil.copyfile(os.path.join(MEDIA, "orientation-1.jpg"), os.path.join(root, files, "orientation-1-9A1B.jpg"))
shutil.copyfile(os.path.join(MEDIA, "orientation-2.jpg"), os.path.join(root, files, "avatar-ann.png"))
write_discord("Direct Messages - Group [1002].json", dm_guild,
              {"id": "1002", "type": "DirectGroupTextChat", "categoryId": "0", "category": "Private", "name": "Weekend", "topic": None}, [
    message("120000000000000001", "RecipientAdd", "2024-03-01T10:00:00+01:00", ann, "",
            mentions=[{"id": "503", "name": "kai", "discriminator": "0000", "nickname": "Kai", "isBot": False}]),
    message("120000000000000002", "Default", "2024-03-01T10:01:00+01:00", kai, "Hallo zusammen 👋",
            stickers=[{"id": "7", "name": "Wave", "format": "Png", "sourceUrl": "https://media.discordapp.net/stickers/7.png"}]),
    message("120000000000000003", "RecipientRemove", "2024-03-01T10:05:00+01:00", kai, "",
            mentions=[{"id": "503", "name": "kai", "discriminator": "0000", "nickname": "Kai", "isBot": False}]),
])
guild = {"id": "2000", "name": "Hikers", "iconUrl": "https://cdn.discordapp.com/icons/2000/x.png"}
channel = {"id": "2001", "type": "GuildTextChat", "categoryId": "2100", "category": "Outdoors", "name": "general", "topic": "Trails"}
write_discord("Hikers - general [2001].json", guild, channel, [
    message("130000000000000001", "GuildMemberJoin", "2024-03-02T08:00:00+00:00", kai),
    message("130000000000000002", "Default", "2024-03-02T08:01:00+00:00", kai, "Trail report: muddy"),
])
write_discord("Hikers - general [2001] [part 2].json", guild, channel, [
    message("130000000000000003", "Reply", "2024-03-02T08:02:00+00:00", ann, "Thanks!",
            reference={"messageId": "130000000000000002", "channelId": "2001", "guildId": "2000"}),
    message("130000000000000004", "ThreadCreated", "2024-03-02T08:03:00+00:00", ann, "Gear talk"),
])
