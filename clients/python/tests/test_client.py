"""The Python client against the real stack (issue 28): keys, sends with and
without an Idempotency-Key (a send whose answer was lost is retried and sends
once), inbound paging across cursors, webhook signatures the dispatcher made,
streamed downloads, and every refusal as its exception class."""

from __future__ import annotations

import hashlib
import http.server
import json
import queue
import threading
import time
import unittest
import urllib.request
import uuid
from datetime import datetime, timezone

from .support import RecordingOpener, client, env, header, needs

import edgemail

STACK = ("EDGEMAIL_BASE_URL", "EDGEMAIL_KEY")


def message(subject: str) -> dict:
    return {"from": env("EDGEMAIL_FROM"), "to": ["ann@example.org"], "subject": subject, "text": "hello"}


def sent_with_subject(subject: str) -> int:
    return sum(1 for e in client().emails.list(limit=200) if e["subject"] == subject)


@needs(*STACK)
class Keys(unittest.TestCase):
    def test_create_list_revoke_and_every_request_names_the_client(self):
        recorded = RecordingOpener()
        mail = client(opener=recorded)
        created = mail.api_keys.create({"name": "from-python", "permissions": ["domains:read"]})
        self.assertTrue(created["token"].startswith("myk_"))
        self.assertIn(created["api_key"]["id"], [k["id"] for k in mail.api_keys.list()["api_keys"]])
        fresh = client(created["token"])
        self.assertIn(f"send.{env('EDGEMAIL_FROM').split('@send.')[1]}", [d["name"] for d in fresh.domains.list()["domains"]])
        mail.api_keys.revoke(created["api_key"]["id"])
        with self.assertRaises(edgemail.UnauthorizedError) as refused:
            fresh.domains.list()
        self.assertEqual(refused.exception.status, 401)
        for request in recorded.requests:
            self.assertEqual(header(request, "User-Agent"), f"edgemail-python/{edgemail.VERSION}")
            self.assertEqual(header(request, "Authorization"), f"Bearer {env('EDGEMAIL_KEY')}")

    def test_any_route_by_hand_with_the_clients_credential_and_rules(self):
        with client().request("GET", "/api/v1/domains", query={"unused": None}) as answer:
            self.assertIn(f"send.{env('EDGEMAIL_FROM').split('@send.')[1]}", [d["name"] for d in json.load(answer)["domains"]])
        with self.assertRaises(edgemail.NotFoundError):
            client().request("GET", f"/api/v1/webhooks/{uuid.uuid4()}/deliveries")
        self.assertIs(edgemail.Edgemail, edgemail.Client)

    def test_the_admin_client_takes_the_platform_credential_and_refuses_a_project_key(self):
        admin = edgemail.Admin(env("EDGEMAIL_ADMIN_KEY"), env("EDGEMAIL_BASE_URL"))
        user = admin.users.create({"email": f"ops-{uuid.uuid4().hex[:8]}@example.com"})["user"]
        self.assertIn(user["id"], [u["id"] for u in admin.users.list()["users"]])
        with self.assertRaises(edgemail.APIError) as refused:
            edgemail.Admin(env("EDGEMAIL_KEY"), env("EDGEMAIL_BASE_URL")).users.list()
        self.assertIn(refused.exception.status, (401, 403))


@needs(*STACK)
class Sending(unittest.TestCase):
    def test_a_key_is_added_when_none_is_given_and_the_same_key_answers_the_first_send_again(self):
        recorded = RecordingOpener()
        mail = client(opener=recorded)
        first = mail.emails.send(message(f"auto key {uuid.uuid4()}"))
        self.assertEqual(len(first["emails"]), 1)
        self.assertRegex(header(recorded.requests[0], "Idempotency-Key"), r"^[0-9a-f-]{36}$")

        subject = f"given key {uuid.uuid4()}"
        key = f"order-{uuid.uuid4()}"
        a = mail.emails.send(message(subject), idempotency_key=key)
        b = mail.emails.send(message(subject), idempotency_key=key)
        self.assertEqual(header(recorded.requests[1], "Idempotency-Key"), key)
        self.assertEqual([e["id"] for e in b["emails"]], [e["id"] for e in a["emails"]])
        self.assertEqual(sent_with_subject(subject), 1)

        other = f"another body {uuid.uuid4()}"
        with self.assertRaises(edgemail.ConflictError) as conflict:
            mail.emails.send(message(other), idempotency_key=key)
        self.assertEqual(conflict.exception.status, 409)
        self.assertEqual(sent_with_subject(other), 0)

    def test_a_send_whose_answer_is_lost_is_retried_with_the_same_key_and_sends_once(self):
        dropping = RecordingOpener(drop_answers=1)
        subject = f"lost answer {uuid.uuid4()}"
        sent = client(opener=dropping).emails.send(message(subject))
        self.assertEqual(len(dropping.requests), 2)
        self.assertEqual(header(dropping.requests[1], "Idempotency-Key"), header(dropping.requests[0], "Idempotency-Key"))
        self.assertEqual(len(sent["emails"]), 1)
        self.assertEqual(sent_with_subject(subject), 1)

    def test_a_post_without_a_key_is_not_retried(self):
        once = RecordingOpener(drop_answers=1)
        name = f"not retried {uuid.uuid4()}"
        with self.assertRaises(edgemail.APIConnectionError) as refused:
            client(opener=once).api_keys.create({"name": name})
        self.assertEqual(refused.exception.status, 0)
        self.assertEqual(len(once.requests), 1)
        self.assertEqual([k["name"] for k in client().api_keys.list()["api_keys"]].count(name), 1)


@needs(*STACK, "EDGEMAIL_INBOUND_IDS_FILE")
class Paging(unittest.TestCase):
    def test_iterating_follows_the_cursors_through_every_inbound_record_newest_first(self):
        with open(env("EDGEMAIL_INBOUND_IDS_FILE")) as f:
            expected = json.load(f)  # as the database orders them when the suite started
        self.assertGreaterEqual(len(expected), 130)
        mail = client(env("EDGEMAIL_READER_KEY"))
        seen = [m["id"] for m in mail.inbound_emails.list(status="received")]
        # Mail this suite received since (the webhook test's) is newer, so it comes first.
        self.assertEqual(seen[len(seen) - len(expected):], expected)

        pages = [len(p["inbound_emails"]) for p in mail.inbound_emails.list(status="received", limit=50).pages()]
        self.assertEqual(pages[:2], [50, 50])
        self.assertEqual(sum(pages), len(seen))
        self.assertEqual(len(pages), -(-len(seen) // 50))
        first = mail.inbound_emails.list(limit=5).first_page()
        self.assertEqual(len(first["inbound_emails"]), 5)
        self.assertIsNotNone(first["next"])

    def test_the_audit_log_pages_by_offset_to_the_same_events_as_one_large_page(self):
        mail = client()
        everything = [e["id"] for e in mail.audit_log.list(limit=200).first_page()["events"]]
        self.assertGreater(len(everything), 3)
        self.assertEqual([e["id"] for e in mail.audit_log.list(limit=2)], everything)


class Receiver:
    """A real HTTP server on 127.0.0.1 keeping each request's headers and raw body."""

    def __init__(self) -> None:
        self.received: queue.Queue[tuple[dict[str, str], bytes]] = queue.Queue()
        received = self.received

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                received.put((dict(self.headers.items()), body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def forward_inbound(raw: bytes) -> dict:
    """`POST /relay/v1/inbound` as a relay node does (docs/relay-protocol.md): the meta JSON, then the raw message."""
    meta = {**json.loads(env("EDGEMAIL_INBOUND_META")), "spool_id": f"{int(time.time() * 1000):016x}-{uuid.uuid4().hex[-12:]}",
            "received_at": datetime.now(timezone.utc).isoformat(), "size": len(raw)}
    meta_bytes = json.dumps(meta).encode()
    request = urllib.request.Request(f"{env('EDGEMAIL_BASE_URL')}/relay/v1/inbound", data=meta_bytes + raw, method="POST", headers={
        "Authorization": f"Bearer {env('EDGEMAIL_NODE_TOKEN')}", "Content-Type": "application/vnd.edgemail.inbound",
        "Edgemail-Meta-Length": str(len(meta_bytes))})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.load(answer)


@needs(*STACK, "EDGEMAIL_NODE_TOKEN")
class Webhooks(unittest.TestCase):
    def test_create_rotate_and_the_dispatchers_signature_verifies_under_the_new_secret_only(self):
        receiver = Receiver()
        self.addCleanup(receiver.close)
        mail = client()
        webhook = mail.webhooks.create({"url": f"{receiver.url}/hooks", "events": ["inbound.received"]})["webhook"]
        rotated = mail.webhooks.rotate_secret(webhook["id"])["webhook"]
        self.assertNotEqual(rotated["secret"], webhook["secret"])

        arrived = forward_inbound(b"From: ann@example.org\r\nSubject: Hello\r\n\r\nHi\r\n")
        headers, raw = receiver.received.get(timeout=20)
        event = edgemail.verify_webhook(raw, headers, rotated["secret"])
        self.assertEqual(event["event"], "inbound.received")
        self.assertEqual(event["data"]["id"], arrived["inbound_emails"][0]["id"])
        self.assertEqual(edgemail.verify_webhook(raw.decode(), headers, rotated["secret"], tolerance=300), event)

        timestamp = int(headers.get("X-Service-Timestamp") or headers["x-service-timestamp"])
        for why, call in {
            "the old secret": lambda: edgemail.verify_webhook(raw, headers, webhook["secret"]),
            "re-encoded JSON": lambda: edgemail.verify_webhook(json.dumps(json.loads(raw), indent=1), headers, rotated["secret"]),
            "a stale timestamp": lambda: edgemail.verify_webhook(raw, headers, rotated["secret"], now=timestamp + 301),
            "a malformed signature": lambda: edgemail.verify_webhook(raw, {**headers, "X-Service-Signature": "sha256=00"}, rotated["secret"]),
            "no signature": lambda: edgemail.verify_webhook(raw, {"X-Service-Timestamp": str(timestamp)}, rotated["secret"]),
        }.items():
            with self.subTest(why), self.assertRaises(edgemail.WebhookVerificationError):
                call()


@needs(*STACK, "EDGEMAIL_RAW_ID")
class Downloads(unittest.TestCase):
    def test_a_3_mb_raw_message_streams_in_chunks_byte_for_byte(self):
        digest = hashlib.sha256()
        size = chunks = 0
        with client(env("EDGEMAIL_READER_KEY")).inbound_emails.get_raw(env("EDGEMAIL_RAW_ID")) as raw:
            while chunk := raw.read(64 * 1024):
                self.assertLessEqual(len(chunk), 64 * 1024)
                digest.update(chunk)
                size += len(chunk)
                chunks += 1
        self.assertEqual(size, int(env("EDGEMAIL_RAW_SIZE")))
        self.assertGreater(chunks, 40)
        self.assertEqual(digest.hexdigest(), env("EDGEMAIL_RAW_SHA256"))

    def test_the_data_export_reads_as_ndjson_values_one_per_line(self):
        lines = list(client().data_export.get())
        self.assertGreater(len(lines), 2)
        self.assertEqual({k: lines[0][k] for k in ("type", "version", "project_id")},
                         {"type": "export", "version": 1, "project_id": env("EDGEMAIL_PROJECT_ID")})
        self.assertEqual(lines[-1]["type"], "end")


@needs(*STACK, "EDGEMAIL_PLAN_KEY")
class Errors(unittest.TestCase):
    def test_400_carries_the_field_errors(self):
        with self.assertRaises(edgemail.ValidationError) as e:
            client().emails.send({**message("bad"), "to": ["not an address"]})
        self.assertEqual(e.exception.status, 400)
        self.assertTrue(e.exception.fields)
        self.assertRegex(e.exception.message, "invalid")

    def test_401_for_an_unknown_key(self):
        with self.assertRaises(edgemail.UnauthorizedError) as e:
            client("myk_nothing_like_a_real_key").domains.list()
        self.assertEqual(e.exception.status, 401)

    def test_403_names_the_permission_the_key_lacks_where_the_api_does(self):
        with self.assertRaises(edgemail.ForbiddenError) as none:
            client(env("EDGEMAIL_READER_KEY")).webhooks.list()
        self.assertEqual(none.exception.status, 403)
        self.assertEqual(none.exception.message, "no access to webhooks in this project")
        with self.assertRaises(edgemail.ForbiddenError) as e:
            client(env("EDGEMAIL_WEBHOOKS_READ_KEY")).webhooks.create({"url": "http://127.0.0.1:9/x", "events": ["*"]})
        self.assertEqual(e.exception.required_permission, "webhooks:write", e.exception.message)

    def test_404_for_a_record_that_is_not_there(self):
        with self.assertRaises(edgemail.NotFoundError) as e:
            client(env("EDGEMAIL_READER_KEY")).inbound_emails.get(str(uuid.uuid4()))
        self.assertEqual(e.exception.status, 404)

    def test_413_for_a_body_over_server_max_body_bytes(self):
        with self.assertRaises(edgemail.PayloadTooLargeError) as e:
            client().api_keys.create({"name": "x" * 70_000})
        self.assertEqual(e.exception.status, 413)

    def test_422_for_a_template_version_that_cannot_render(self):
        mail = client()
        template = mail.templates.create({"name": f"bare-{uuid.uuid4().hex[:8]}"})["template"]
        version = mail.templates.create_version(template["id"], {})["version"]
        with self.assertRaises(edgemail.UnprocessableError) as e:
            mail.templates.preview(template["id"], version["id"], {})
        self.assertEqual(e.exception.status, 422)
        self.assertRegex(e.exception.message, "has no localizations")

    def test_429_a_plans_hourly_limit_is_a_plan_limit_not_retried(self):
        recorded = RecordingOpener()
        mail = client(env("EDGEMAIL_PLAN_KEY"), opener=recorded)
        limited = {**message("hi"), "from": env("EDGEMAIL_PLAN_FROM")}
        mail.emails.send(limited)
        with self.assertRaises(edgemail.RateLimitedError) as e:
            mail.emails.send(limited)
        self.assertEqual(e.exception.status, 429)
        self.assertEqual(e.exception.kind, "plan_limit")
        self.assertTrue(e.exception.is_plan_limit)
        self.assertEqual(e.exception.message, f"hourly email limit reached (1 per hour on plan {env('EDGEMAIL_PLAN_NAME')})")
        self.assertEqual(len(recorded.requests), 2)  # a send carries an Idempotency-Key, but a plan limit is never waited out


if __name__ == "__main__":
    unittest.main()
