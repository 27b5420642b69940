#!/usr/bin/env python3
"""Writes the app-database fixtures of Tests/BubbleImportTests/Fixtures/appdb, run once; the files
are committed, so `make test` needs none of this.

- whatsapp-new/: msgstore.db in the normalised schema (message, chat, jid, message_media,
  message_quoted, message_add_on(_reaction), message_system*, message_edit_info, message_revoked,
  message_vcard, message_location, message_poll_option, call_log; column lists as WhatsApp 2.24+
  writes them), wa.db (wa_contacts, wa_vnames), Media/… with a photo and a voice note, and the same
  database as msgstore.db.crypt15 (64-digit key below, made by wa-crypt-tools) with its
  encrypted_backup.key, and as msgstore.db.crypt14 with a crypt14 `key` file.
- whatsapp-legacy/: msgstore.db in the legacy schema (messages, messages_quotes, chat_list).
- signal/: a Signal Desktop profile: config.json with the raw key, sql/db.sqlite in SQLCipher 4
  (written by SQLCipher itself, sqlcipher3-binary) with its WAL holding the newest messages, and
  attachments.noindex/ with a "version 2" encrypted attachment and an old plain one.

Needs a virtual environment (no system packages are touched):
    python3 -m venv /tmp/gen && /tmp/gen/bin/pip install sqlcipher3-binary wa-crypt-tools
    /tmp/gen/bin/python scripts/make-app-db-fixtures.py
"""
import base64, hashlib, hmac, json, os, shutil, sqlite3, sys, zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIX = os.path.join(ROOT, "Tests/BubbleImportTests/Fixtures")
OUT = os.path.join(FIX, "appdb")
MEDIA = os.path.join(FIX, "media")

# The keys the tests use.
WHATSAPP_KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
SIGNAL_KEY = "8f2e5c1a9b7d3e6f0a4c8b2d6e1f3a5c7b9d0e2f4a6c8b1d3e5f7a9c0b2d4e6f"

T0 = 1709287200000  # 2024-03-01T10:00:00Z in ms


def fresh(path):
    if os.path.exists(path):
        shutil.rmtree(path)
    os.makedirs(path)


def copy_media(src, dst):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copyfile(os.path.join(MEDIA, src), dst)


# --- WhatsApp, normalised schema -------------------------------------------------------------

NEW_SCHEMA = """
CREATE TABLE jid (_id INTEGER PRIMARY KEY AUTOINCREMENT, user TEXT NOT NULL, server TEXT NOT NULL, agent INTEGER, device INTEGER, type INTEGER, raw_string TEXT);
CREATE TABLE chat (_id INTEGER PRIMARY KEY AUTOINCREMENT,jid_row_id INTEGER UNIQUE,hidden INTEGER,subject TEXT,created_timestamp INTEGER,display_message_row_id INTEGER,last_message_row_id INTEGER,archived INTEGER,sort_timestamp INTEGER, group_type INTEGER NOT NULL DEFAULT 0);
CREATE TABLE message (_id INTEGER PRIMARY KEY AUTOINCREMENT, chat_row_id INTEGER NOT NULL, from_me INTEGER NOT NULL, key_id TEXT NOT NULL, sender_jid_row_id INTEGER, status INTEGER, broadcast INTEGER, recipient_count INTEGER, participant_hash TEXT, origination_flags INTEGER, origin INTEGER, timestamp INTEGER, received_timestamp INTEGER, receipt_server_timestamp INTEGER, message_type INTEGER, text_data TEXT, starred INTEGER, lookup_tables INTEGER, sort_id INTEGER NOT NULL DEFAULT 0 , message_add_on_flags INTEGER, view_mode INTEGER, translated_text TEXT, view_replies_thread_id INTEGER);
CREATE TABLE message_media (  message_row_id INTEGER PRIMARY KEY, chat_row_id INTEGER, autotransfer_retry_enabled INTEGER, multicast_id TEXT, media_job_uuid TEXT, transferred INTEGER, transcoded INTEGER, file_path TEXT, file_size INTEGER, suspicious_content INTEGER, trim_from INTEGER, trim_to INTEGER, face_x INTEGER, face_y INTEGER, media_key BLOB, media_key_timestamp INTEGER, width INTEGER, height INTEGER, has_streaming_sidecar INTEGER, gif_attribution INTEGER, thumbnail_height_width_ratio REAL, direct_path TEXT, first_scan_sidecar BLOB, first_scan_length INTEGER, message_url TEXT, mime_type TEXT, file_length INTEGER, media_name TEXT, file_hash TEXT, media_duration INTEGER, page_count INTEGER, enc_file_hash TEXT, partial_media_hash TEXT, partial_media_enc_hash TEXT, is_animated_sticker INTEGER, original_file_hash TEXT, mute_video INTEGER DEFAULT 0, media_caption TEXT);
CREATE TABLE message_quoted (    message_row_id             INTEGER PRIMARY KEY AUTOINCREMENT,    chat_row_id                INTEGER NOT NULL,    parent_message_chat_row_id INTEGER NOT NULL,    from_me                    INTEGER NOT NULL,    sender_jid_row_id          INTEGER,    key_id                     TEXT    NOT NULL,    timestamp                  INTEGER,    message_type               INTEGER,    origin                     INTEGER,    text_data                  TEXT,    payment_transaction_id     TEXT,    lookup_tables              INTEGER, quoted_source INTEGER, quoted_type INTEGER);
CREATE TABLE message_add_on (_id INTEGER PRIMARY KEY AUTOINCREMENT, chat_row_id INTEGER NOT NULL, from_me INTEGER NOT NULL, key_id TEXT NOT NULL, sender_jid_row_id INTEGER, parent_message_row_id INTEGER NOT NULL, timestamp INTEGER, status INTEGER, message_add_on_type INTEGER);
CREATE TABLE message_add_on_reaction (message_add_on_row_id INTEGER PRIMARY KEY, reaction TEXT, sender_timestamp INTEGER);
CREATE TABLE message_system (message_row_id INTEGER PRIMARY KEY, action_type INTEGER NOT NULL);
CREATE TABLE message_system_chat_participant (message_row_id INTEGER, user_jid_row_id INTEGER);
CREATE TABLE message_system_group (message_row_id INTEGER PRIMARY KEY, is_me_joined INTEGER);
CREATE TABLE message_system_value_change (message_row_id INTEGER PRIMARY KEY, old_data TEXT);
CREATE TABLE message_edit_info (message_row_id INTEGER PRIMARY KEY, original_key_id TEXT NOT NULL, edited_timestamp INTEGER NOT NULL, sender_timestamp INTEGER NOT NULL);
CREATE TABLE message_revoked (message_row_id INTEGER PRIMARY KEY, revoked_key_id TEXT NOT NULL, admin_jid_row_id INTEGER, revoke_timestamp INTEGER);
CREATE TABLE message_vcard (_id  INTEGER PRIMARY KEY AUTOINCREMENT, message_row_id INTEGER, vcard TEXT);
CREATE TABLE message_location (message_row_id INTEGER PRIMARY KEY, chat_row_id INTEGER, latitude REAL, longitude REAL, place_name TEXT, place_address TEXT, url TEXT, live_location_share_duration INTEGER);
CREATE TABLE message_poll_option (_id INTEGER PRIMARY KEY AUTOINCREMENT, message_row_id INTEGER NOT NULL, option_name TEXT, vote_total INTEGER);
CREATE TABLE message_view_once_media (message_row_id INTEGER PRIMARY KEY, state INTEGER);
CREATE TABLE call_log (_id INTEGER PRIMARY KEY AUTOINCREMENT, jid_row_id INTEGER, from_me INTEGER, call_id TEXT, transaction_id INTEGER, timestamp INTEGER, video_call INTEGER, duration INTEGER, call_result INTEGER, bytes_transferred INTEGER, group_jid_row_id INTEGER NOT NULL DEFAULT 0, is_joinable_group_call INTEGER, call_creator_device_jid_row_id INTEGER NOT NULL DEFAULT 0);
CREATE TABLE props (_id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT UNIQUE, value TEXT);
CREATE TABLE jid_map (lid_row_id INTEGER PRIMARY KEY NOT NULL, jid_row_id INTEGER NOT NULL, sort_id INTEGER NOT NULL DEFAULT 0);
"""

WA_SCHEMA = """
CREATE TABLE wa_contacts(_id INTEGER PRIMARY KEY AUTOINCREMENT,jid TEXT NOT NULL,is_whatsapp_user BOOLEAN NOT NULL,status TEXT,number TEXT,display_name TEXT,given_name TEXT,family_name TEXT,wa_name TEXT,sort_name TEXT,nickname TEXT);
CREATE TABLE wa_vnames(_id INTEGER PRIMARY KEY AUTOINCREMENT, jid TEXT NOT NULL, verified_name TEXT);
"""


def whatsapp_new(folder):
    db = sqlite3.connect(os.path.join(folder, "msgstore.db"))
    db.executescript(NEW_SCHEMA)
    jids = [(1, "491700000000", "s.whatsapp.net"), (2, "491701234567", "s.whatsapp.net"),
            (3, "491709876543", "s.whatsapp.net"), (4, "120363025246125486", "g.us"),
            (5, "15550102000", "s.whatsapp.net"), (6, "status", "broadcast"), (7, "205599342211987", "lid")]
    for i, u, s in jids:
        db.execute("INSERT INTO jid VALUES (?,?,?,0,0,0,?)", (i, u, s, f"{u}@{s}"))
    db.execute("INSERT INTO props (key, value) VALUES ('user_push_name', 'Zoë')")
    # Newer WhatsApp names group senders by a LID (@lid); jid_map ties it to the phone number's jid.
    db.execute("INSERT INTO jid_map VALUES (7, 5, 0)")
    db.execute("INSERT INTO chat (_id, jid_row_id, hidden, subject, created_timestamp) VALUES (1, 2, 0, NULL, ?)", (T0,))
    db.execute("INSERT INTO chat (_id, jid_row_id, hidden, subject, created_timestamp, group_type) VALUES (2, 4, 0, 'Family 👪', ?, 0)", (T0,))
    db.execute("INSERT INTO chat (_id, jid_row_id, hidden, subject, created_timestamp) VALUES (3, 6, 0, NULL, ?)", (T0,))

    def msg(i, chat, me, t, typ, text=None, sender=0, status=0):
        db.execute("""INSERT INTO message (_id, chat_row_id, from_me, key_id, sender_jid_row_id, status, timestamp,
                      received_timestamp, message_type, text_data, sort_id) VALUES (?,?,?,?,?,?,?,?,?,?,?)""",
                   (i, chat, me, f"KEY{i:04d}", sender, status, T0 + t * 1000, T0 + t * 1000 + 500, typ, text, i))

    def media(i, chat, path, mime, name=None, duration=0, pages=0, size=0, w=0, h=0, sticker=0):
        db.execute("""INSERT INTO message_media (message_row_id, chat_row_id, file_path, file_size, mime_type, media_name,
                      media_duration, page_count, width, height, is_animated_sticker) VALUES (?,?,?,?,?,?,?,?,?,?,?)""",
                   (i, chat, path, size, mime, name, duration, pages, w, h, sticker))

    # Chat 1: Ann (contact "Ann Lee"), one to one.
    msg(1, 1, 0, 0, 0, "Hi *there*, see _this_")
    msg(2, 1, 1, 60, 0, "Hello Ann", status=13)
    msg(3, 1, 0, 120, 1, "The beach 🏖")
    media(3, 1, "Media/WhatsApp Images/IMG-20240301-WA0001.jpg", "image/jpeg", w=8, h=8, size=852)
    msg(4, 1, 1, 180, 0, "Yes, hi!")
    db.execute("INSERT INTO message_quoted VALUES (4, 1, 1, 0, 0, 'KEY0001', ?, 0, 0, 'Hi *there*, see _this_', NULL, 0, 0, 0)", (T0,))
    db.execute("INSERT INTO message_edit_info VALUES (4, 'KEY0004', ?, ?)", (T0 + 200_000, T0 + 200_000))
    msg(5, 1, 0, 240, 2, None)
    media(5, 1, "Media/WhatsApp Voice Notes/202409/PTT-20240301-WA0002.opus", "audio/ogg; codecs=opus", duration=4, size=3067)
    msg(6, 1, 0, 300, 15, None)
    db.execute("INSERT INTO message_revoked VALUES (6, 'KEY0006', NULL, ?)", (T0 + 310_000,))
    msg(7, 1, 1, 360, 5, None)
    db.execute("INSERT INTO message_location VALUES (7, 1, 52.516275, 13.377704, 'Brandenburger Tor', 'Pariser Platz, Berlin', NULL, NULL)")
    msg(8, 1, 0, 420, 42, None)
    media(8, 1, "Media/WhatsApp Images/Private/IMG-20240301-WA0003.jpg", "image/jpeg")
    db.execute("INSERT INTO message_view_once_media VALUES (8, 1)")
    msg(9, 1, 0, 480, 9, "Trip plan")
    media(9, 1, "Media/WhatsApp Documents/Trip plan.pdf", "application/pdf", name="Trip plan.pdf", pages=2, size=1234)
    msg(10, 1, 1, 540, 20, None)
    media(10, 1, "Media/WhatsApp Stickers/STK-20240301-WA0004.webp", "image/webp", sticker=0)
    msg(11, 1, 0, 600, 66, "Dinner where?")
    db.execute("INSERT INTO message_poll_option (message_row_id, option_name, vote_total) VALUES (11, 'Pizza', 2)")
    db.execute("INSERT INTO message_poll_option (message_row_id, option_name, vote_total) VALUES (11, 'Sushi', 1)")
    msg(12, 1, 1, 660, 4, "Kai Weber")
    db.execute("INSERT INTO message_vcard (message_row_id, vcard) VALUES (12, 'BEGIN:VCARD\nVERSION:3.0\nFN:Kai Weber\nTEL;type=CELL:+1 555 010 2000\nEND:VCARD')")
    msg(13, 1, 1, 720, 0, "```code``` and ~gone~", status=5)
    # Reactions: Ann ❤️ on message 2; a removed reaction (empty text) on message 1.
    db.execute("INSERT INTO message_add_on VALUES (1, 1, 0, 'R1', 0, 2, ?, 0, 56)", (T0 + 70_000,))
    db.execute("INSERT INTO message_add_on_reaction VALUES (1, '❤️', ?)", (T0 + 70_000,))
    db.execute("INSERT INTO message_add_on VALUES (2, 1, 1, 'R2', 0, 1, ?, 0, 56)", (T0 + 75_000,))
    db.execute("INSERT INTO message_add_on_reaction VALUES (2, '', ?)", (T0 + 75_000,))
    # Calls with Ann: a voice call of 2:05 she made, a missed video call.
    db.execute("INSERT INTO call_log (jid_row_id, from_me, call_id, timestamp, video_call, duration, call_result) VALUES (2, 0, 'C1', ?, 0, 125, 5)", (T0 + 90_000,))
    db.execute("INSERT INTO call_log (jid_row_id, from_me, call_id, timestamp, video_call, duration, call_result) VALUES (2, 0, 'C2', ?, 1, 0, 2)", (T0 + 630_000,))

    # Chat 2: the group "Family 👪".
    msg(20, 2, 0, 1000, 7, None, sender=3)
    db.execute("INSERT INTO message_system VALUES (20, 11)")
    msg(21, 2, 0, 1010, 7, None, sender=3)
    db.execute("INSERT INTO message_system VALUES (21, 12)")
    db.execute("INSERT INTO message_system_chat_participant VALUES (21, 5)")
    msg(22, 2, 0, 1020, 0, "Welcome!", sender=3)
    msg(23, 2, 0, 1030, 0, "Thanks ~all~", sender=5)
    msg(24, 2, 1, 1040, 0, "👋")
    msg(25, 2, 0, 1050, 7, None, sender=3)
    db.execute("INSERT INTO message_system VALUES (25, 1)")
    db.execute("INSERT INTO message_system_value_change VALUES (25, 'Family')")
    msg(26, 2, 0, 1060, 0, "Back to you", sender=7)
    db.execute("INSERT INTO message_quoted VALUES (26, 2, 2, 1, 0, 'KEY0024', ?, 0, 0, '👋', NULL, 0, 0, 0)", (T0,))

    # Status updates (status@broadcast) are not a chat.
    msg(30, 3, 0, 1100, 0, "My status", sender=2)
    db.commit()
    db.close()

    wa = sqlite3.connect(os.path.join(folder, "wa.db"))
    wa.executescript(WA_SCHEMA)
    wa.execute("INSERT INTO wa_contacts (jid, is_whatsapp_user, number, display_name, given_name, family_name, wa_name) VALUES ('491701234567@s.whatsapp.net', 1, '+49 170 1234567', 'Ann Lee', 'Ann', 'Lee', 'Annie')")
    wa.execute("INSERT INTO wa_contacts (jid, is_whatsapp_user, number, display_name, wa_name) VALUES ('491709876543@s.whatsapp.net', 1, NULL, NULL, 'Ben')")
    wa.execute("INSERT INTO wa_contacts (jid, is_whatsapp_user, number, display_name, wa_name) VALUES ('120363025246125486@g.us', 1, NULL, 'Family 👪', NULL)")
    wa.commit()
    wa.close()

    copy_media("orientation-1.jpg", os.path.join(folder, "Media/WhatsApp Images/IMG-20240301-WA0001.jpg"))
    copy_media("PTT-20211014-WA0004.opus", os.path.join(folder, "Media/WhatsApp Voice Notes/202409/PTT-20240301-WA0002.opus"))
    copy_media("STK-20211014-WA0005.webp", os.path.join(folder, "Media/WhatsApp Stickers/STK-20240301-WA0004.webp"))


def whatsapp_backups(folder):
    from wa_crypt_tools.lib.key.key15 import Key15
    from wa_crypt_tools.lib.key.key14 import Key14
    from wa_crypt_tools.lib.db.db15 import Database15
    from wa_crypt_tools.lib.db.db14 import Database14
    from wa_crypt_tools.lib.props import Props

    plain = open(os.path.join(folder, "msgstore.db"), "rb").read()
    key15 = Key15(key=bytes.fromhex(WHATSAPP_KEY))
    props = Props(wa_version="2.24.9.78", jid="67")
    out = Database15(key=key15, iv=bytes(range(16))).encrypt(key15, props, zlib.compress(plain, 1))
    open(os.path.join(folder, "msgstore.db.crypt15"), "wb").write(out)
    open(os.path.join(folder, "encrypted_backup.key"), "wb").write(key15.dump())

    key14 = Key14()
    out = Database14(key=key14, iv=bytes(range(16, 32))).encrypt(key14, props, zlib.compress(plain, 1))
    open(os.path.join(folder, "msgstore.db.crypt14"), "wb").write(out)
    open(os.path.join(folder, "key"), "wb").write(key14.dump())


# --- WhatsApp, legacy schema -----------------------------------------------------------------

LEGACY_COLUMNS = """_id INTEGER PRIMARY KEY AUTOINCREMENT, key_remote_jid TEXT NOT NULL, key_from_me INTEGER, key_id TEXT NOT NULL, status INTEGER, needs_push INTEGER, data TEXT, timestamp INTEGER, media_url TEXT, media_mime_type TEXT, media_wa_type TEXT, media_size INTEGER, media_name TEXT, media_caption TEXT, media_hash TEXT, media_duration INTEGER, origin INTEGER, latitude REAL, longitude REAL, thumb_image TEXT, remote_resource TEXT, received_timestamp INTEGER, send_timestamp INTEGER, receipt_server_timestamp INTEGER, receipt_device_timestamp INTEGER, read_device_timestamp INTEGER, played_device_timestamp INTEGER, raw_data BLOB, recipient_count INTEGER, participant_hash TEXT, starred INTEGER, quoted_row_id INTEGER, mentioned_jids TEXT, multicast_id TEXT, edit_version INTEGER, media_enc_hash TEXT, payment_transaction_id TEXT, forwarded INTEGER, preview_type INTEGER, send_count INTEGER"""


def whatsapp_legacy(folder):
    db = sqlite3.connect(os.path.join(folder, "msgstore.db"))
    db.execute(f"CREATE TABLE messages ({LEGACY_COLUMNS})")
    db.execute(f"CREATE TABLE messages_quotes ({LEGACY_COLUMNS})")
    db.execute("CREATE TABLE chat_list (_id INTEGER PRIMARY KEY AUTOINCREMENT, key_remote_jid TEXT UNIQUE, message_table_id INTEGER, subject TEXT, creation INTEGER, last_read_message_table_id INTEGER, archived INTEGER, sort_timestamp INTEGER)")
    db.execute("INSERT INTO chat_list (key_remote_jid, subject, creation) VALUES ('491701234567@s.whatsapp.net', NULL, ?)", (T0,))
    db.execute("INSERT INTO chat_list (key_remote_jid, subject, creation) VALUES ('4917012345-1400000000@g.us', 'Old group', ?)", (T0,))

    def m(i, jid, me, t, data=None, wa_type="0", status=0, remote=None, mime=None, name=None, caption=None,
          duration=0, lat=0, lon=0, quoted=None, size=0, table="messages", key=None):
        db.execute(f"""INSERT INTO {table} (_id, key_remote_jid, key_from_me, key_id, status, data, timestamp, media_wa_type,
                      media_mime_type, media_name, media_caption, media_duration, latitude, longitude, remote_resource,
                      quoted_row_id, media_size, received_timestamp) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)""",
                   (i, jid, me, key or f"L{i}", status, data, T0 + t * 1000, wa_type, mime, name, caption, duration, lat, lon,
                    remote, quoted, size, T0 + t * 1000))

    ann = "491701234567@s.whatsapp.net"
    grp = "4917012345-1400000000@g.us"
    # Row 1 of a legacy database is a placeholder row with key_remote_jid '-1'.
    m(1, "-1", 0, -10, None, "0")
    m(2, ann, 0, 0, "Old *times*")
    m(3, ann, 1, 60, "Indeed", status=13)
    m(4, ann, 0, 120, None, "1", mime="image/jpeg", name="IMG-20140301-WA0001.jpg", caption="Then", size=852)
    m(1, ann, 0, 0, "Old *times*", table="messages_quotes", key="L2")
    m(5, ann, 1, 180, "Quoting you", status=13, quoted=1)
    m(6, ann, 0, 240, None, "5", lat=48.8584, lon=2.2945, name="Tour Eiffel")
    m(7, ann, 0, 300, None, "15")
    # A group event: status 6, its kind in media_size (11: created), the subject in data.
    m(8, grp, 1, 400, "Old group", "0", status=6, remote="", size=11)
    m(9, grp, 0, 410, "Hello group", remote="491709876543@s.whatsapp.net")
    m(10, grp, 1, 420, "Hi Ben")
    db.commit()
    db.close()
    copy_media("orientation-1.jpg", os.path.join(folder, "Media/WhatsApp Images/IMG-20140301-WA0001.jpg"))


# --- Signal Desktop --------------------------------------------------------------------------

SIGNAL_SCHEMA = """
CREATE TABLE conversations (id STRING PRIMARY KEY ASC, json TEXT, active_at INTEGER, type STRING, members TEXT, name TEXT, profileName TEXT, profileFamilyName TEXT, profileFullName TEXT, e164 TEXT, serviceId TEXT, groupId TEXT, profileLastFetchedAt INTEGER, expireTimerVersion INTEGER NOT NULL DEFAULT 1);
CREATE TABLE messages (rowid INTEGER PRIMARY KEY ASC, id STRING UNIQUE, json TEXT, readStatus INTEGER, expires_at INTEGER, sent_at INTEGER, schemaVersion INTEGER, conversationId STRING, received_at INTEGER, source STRING, hasAttachments INTEGER, hasFileAttachments INTEGER, hasVisualMediaAttachments INTEGER, expireTimer INTEGER, expirationStartTimestamp INTEGER, type STRING, body TEXT, messageTimer INTEGER, messageTimerStart INTEGER, messageTimerExpiresAt INTEGER, isErased INTEGER, isViewOnce INTEGER, sourceServiceId TEXT, serverGuid STRING NULL, sourceDevice INTEGER, storyId STRING, isStory INTEGER, isChangeCreatedByUs INTEGER NOT NULL DEFAULT 0, isTimerChangeFromSync INTEGER DEFAULT 0, seenStatus NUMBER default 0, storyDistributionListId STRING, expiresAt INT, shouldAffectActivity INTEGER, isUserInitiatedMessage INTEGER, mentionsMe INTEGER NOT NULL DEFAULT 0, isGroupLeaveEvent INTEGER, isGroupLeaveEventFromOther INTEGER, callId TEXT, received_at_ms INTEGER);
CREATE TABLE message_attachments (messageId TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE, editHistoryIndex INTEGER, attachmentType TEXT NOT NULL, orderInMessage INTEGER NOT NULL, conversationId TEXT NOT NULL, sentAt INTEGER NOT NULL, clientUuid TEXT, size INTEGER NOT NULL, contentType TEXT NOT NULL, path TEXT, plaintextHash TEXT, localKey TEXT, caption TEXT, fileName TEXT, blurHash TEXT, height INTEGER, width INTEGER, digest TEXT, key TEXT, iv TEXT, flags INTEGER, keyToDecrypt TEXT, version INTEGER, duration REAL, pending INTEGER, error INTEGER);
CREATE TABLE callsHistory (callId TEXT PRIMARY KEY, peerId TEXT, ringerId TEXT, startedById TEXT, mode TEXT NOT NULL, type TEXT NOT NULL, direction TEXT NOT NULL, status TEXT NOT NULL, timestamp INTEGER NOT NULL, endedTimestamp INTEGER);
CREATE TABLE items (id STRING PRIMARY KEY ASC, json TEXT);
"""


def encrypt_attachment(plain, local_key):
    from Cryptodome.Cipher import AES
    from Cryptodome.Util.Padding import pad
    aes_key, mac_key = local_key[:32], local_key[32:]
    iv = hashlib.sha256(plain).digest()[:16]
    ct = AES.new(aes_key, AES.MODE_CBC, iv).encrypt(pad(plain + b"\0" * 37, 16))  # Signal pads the plaintext
    mac = hmac.new(mac_key, iv + ct, hashlib.sha256).digest()
    return iv + ct + mac


def signal(folder):
    import sqlcipher3
    os.makedirs(os.path.join(folder, "sql"))
    json.dump({"key": SIGNAL_KEY}, open(os.path.join(folder, "config.json"), "w"))
    path = os.path.join(folder, "sql", "db.sqlite")
    live = path + ".live"
    db = sqlcipher3.connect(live)
    db.execute(f"PRAGMA key = \"x'{SIGNAL_KEY}'\"")
    db.execute("PRAGMA cipher_compatibility = 4")
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA wal_autocheckpoint = 0")
    db.executescript(SIGNAL_SCHEMA)

    def conv(cid, typ, **fields):
        j = dict(id=cid, type=typ, **fields)
        db.execute("INSERT INTO conversations (id, json, type, name, profileName, profileFamilyName, e164, serviceId) VALUES (?,?,?,?,?,?,?,?)",
                   (cid, json.dumps(j), typ, fields.get("name"), fields.get("profileName"), fields.get("profileFamilyName"),
                    fields.get("e164"), fields.get("serviceId")))

    conv("c-ann", "private", name="Ann Lee", profileName="Ann", e164="+491701234567", serviceId="aci-ann")
    conv("c-me", "private", profileName="Zoë", e164="+491700000000", serviceId="aci-me")
    conv("c-kai", "private", profileName="Kai", profileFamilyName="Weber", e164="+15550102000", serviceId="aci-kai")
    conv("g-climb", "group", name="Climbing 🧗", groupId="Z3JvdXA=", membersV2=[{"aci": "aci-ann"}, {"aci": "aci-me"}, {"aci": "aci-kai"}])
    db.execute("INSERT INTO items VALUES ('uuid_id', ?)", (json.dumps({"id": "uuid_id", "value": "aci-me.2"}),))

    def message(mid, conv_id, t, typ, body=None, source=None, **extra):
        j = dict(id=mid, conversationId=conv_id, type=typ, sent_at=T0 + t * 1000, received_at=T0 + t * 1000 + 7,
                 timestamp=T0 + t * 1000, **extra)
        if body is not None:
            j["body"] = body
        if source:
            j["sourceServiceId"] = source
        db.execute("INSERT INTO messages (id, json, sent_at, conversationId, received_at, type, body, sourceServiceId, callId, hasAttachments) VALUES (?,?,?,?,?,?,?,?,?,?)",
                   (mid, json.dumps(j, ensure_ascii=False), j["sent_at"], conv_id, j["received_at"], typ, body, source,
                    extra.get("callId"), 1 if extra.get("attachments") else 0))

    # "😀 bold and hidden": bold over "bold" (UTF-16 offset 3, after a surrogate pair and a space).
    message("m1", "c-ann", 0, "incoming", "😀 bold and hidden", "aci-ann",
            bodyRanges=[{"start": 3, "length": 4, "style": 1}, {"start": 12, "length": 6, "style": 3}])
    message("m2", "c-ann", 60, "outgoing", "Hi Ann", reactions=[{"emoji": "❤️", "fromId": "c-ann", "targetTimestamp": T0 + 60_000, "timestamp": T0 + 65_000}],
            sendStateByConversationId={"c-ann": {"status": "Read"}})
    message("m3", "c-ann", 120, "outgoing", "Replying", quote={"id": T0, "authorAci": "aci-ann", "text": "😀 bold and hidden",
            "bodyRanges": [{"start": 12, "length": 6, "style": 3}], "attachments": []})
    # A photo in message_attachments, encrypted (version 2).
    photo = open(os.path.join(MEDIA, "orientation-1.jpg"), "rb").read()
    local_key = bytes((i * 7 + 3) % 256 for i in range(64))
    rel = "ab/ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12"
    os.makedirs(os.path.join(folder, "attachments.noindex", "ab"))
    open(os.path.join(folder, "attachments.noindex", rel), "wb").write(encrypt_attachment(photo, local_key))
    message("m4", "c-ann", 180, "incoming", "Look", "aci-ann")
    db.execute("""INSERT INTO message_attachments (messageId, editHistoryIndex, attachmentType, orderInMessage, conversationId, sentAt,
                  size, contentType, path, localKey, fileName, height, width, flags, version)
                  VALUES ('m4', -1, 'attachment', 0, 'c-ann', ?, ?, 'image/jpeg', ?, ?, 'IMG_0001.jpg', 8, 8, 0, 2)""",
               (T0 + 180_000, len(photo), rel, base64.b64encode(local_key).decode()))
    # Edited: the body is the newest; editHistory lists every version, newest first.
    message("m5", "c-ann", 240, "incoming", "Final text", "aci-ann",
            editHistory=[{"body": "Final text", "timestamp": T0 + 250_000}, {"body": "First text", "timestamp": T0 + 240_000}],
            editMessageTimestamp=T0 + 250_000)
    message("m6", "c-ann", 300, "call-history", None, None, callId="call-1")
    db.execute("INSERT INTO callsHistory VALUES ('call-1', 'c-ann', 'c-ann', NULL, 'Direct', 'Video', 'Incoming', 'Missed', ?, NULL)", (T0 + 300_000,))
    message("m7", "c-ann", 360, "timer-notification", None, None,
            expirationTimerUpdate={"expireTimer": 3600, "sourceServiceId": "aci-ann"})
    # An older profile: the attachment listed in the message's JSON, a plain file.
    voice = open(os.path.join(MEDIA, "PTT-20211014-WA0004.opus"), "rb").read()
    os.makedirs(os.path.join(folder, "attachments.noindex", "cd"))
    open(os.path.join(folder, "attachments.noindex", "cd", "cdvoice"), "wb").write(voice)
    message("m8", "c-ann", 420, "outgoing", "", attachments=[{"contentType": "audio/ogg", "path": "cd/cdvoice", "size": len(voice),
            "flags": 1, "fileName": None}])
    # A sticker: its pack's file in stickers.noindex, encrypted the same way.
    sticker = open(os.path.join(MEDIA, "STK-20211014-WA0005.webp"), "rb").read()
    sticker_key = bytes((i * 11 + 5) % 256 for i in range(64))
    os.makedirs(os.path.join(folder, "stickers.noindex", "ef"))
    open(os.path.join(folder, "stickers.noindex", "ef", "ef01"), "wb").write(encrypt_attachment(sticker, sticker_key))
    message("m9", "c-ann", 450, "incoming", None, "aci-ann", sticker={"packId": "p1", "stickerId": 3, "emoji": "😀",
            "data": {"path": "ef/ef01", "contentType": "image/webp", "size": len(sticker), "localKey": base64.b64encode(sticker_key).decode(), "version": 2}})
    db.commit()
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    # Group: the newest messages, left in the WAL (the live database is not checkpointed).
    message("g1", "g-climb", 500, "incoming", "Anyone at 6? \ufffc", "aci-kai",
            bodyRanges=[{"start": 13, "length": 1, "mentionAci": "aci-ann", "replacementText": "Ann Lee"}])
    message("g2", "g-climb", 560, "outgoing", "Count me in")
    message("g3", "g-climb", 620, "incoming", "Great", "aci-ann")
    db.commit()
    shutil.copyfile(live, path)
    shutil.copyfile(live + "-wal", path + "-wal")
    db.close()
    for f in [live, live + "-wal", live + "-shm"]:
        if os.path.exists(f):
            os.remove(f)
    # What the copy holds, read from a copy of it (closing a connection checkpoints the WAL away):
    # the WAL must hold the group's messages for the fixture to mean anything.
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copyfile(path, os.path.join(tmp, "db.sqlite"))
        check = sqlcipher3.connect(os.path.join(tmp, "db.sqlite"))
        check.execute(f"PRAGMA key = \"x'{SIGNAL_KEY}'\"")
        without_wal = check.execute("SELECT count(*) FROM messages").fetchone()[0]
        check.close()
        shutil.copyfile(path, os.path.join(tmp, "db2.sqlite"))
        shutil.copyfile(path + "-wal", os.path.join(tmp, "db2.sqlite-wal"))
        check = sqlcipher3.connect(os.path.join(tmp, "db2.sqlite"))
        check.execute(f"PRAGMA key = \"x'{SIGNAL_KEY}'\"")
        with_wal = check.execute("SELECT count(*) FROM messages").fetchone()[0]
        check.close()
    assert (without_wal, with_wal) == (9, 12), (without_wal, with_wal)


def sealed_signal_key():
    """config.json's encryptedKey as Signal Desktop on Linux writes it (Chromium's safe storage,
    "v11"): the hex key, PKCS#7-padded, AES-128-CBC with an IV of 16 spaces under
    PBKDF2-HMAC-SHA1(password, "saltysalt", 1 round, 16 bytes); the keyring password is "peanuts"."""
    from Cryptodome.Cipher import AES
    from Cryptodome.Util.Padding import pad
    key = hashlib.pbkdf2_hmac("sha1", b"peanuts", b"saltysalt", 1, 16)
    sealed = b"v11" + AES.new(key, AES.MODE_CBC, b" " * 16).encrypt(pad(SIGNAL_KEY.encode(), 16))
    open(os.path.join(OUT, "signal-sealed-key.txt"), "w").write(sealed.hex() + "\n")


def main():
    fresh(OUT)
    new = os.path.join(OUT, "whatsapp-new"); os.makedirs(new)
    whatsapp_new(new)
    whatsapp_backups(new)
    legacy = os.path.join(OUT, "whatsapp-legacy"); os.makedirs(legacy)
    whatsapp_legacy(legacy)
    sig = os.path.join(OUT, "signal"); os.makedirs(sig)
    signal(sig)
    sealed_signal_key()
    print("wrote", OUT)


if __name__ == "__main__":
    main()
