#!/usr/bin/env python3
"""The notification race on real servers: the committed figures (sessions.json, real.json)
are what their records add up to, docs/experiment.md quotes them, and the adding up is
right on hand-made records. Run: python3 study/race/race_test.py (CTest: race_study_real)."""
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import real  # noqa: E402
import sessions  # noqa: E402


def load(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        return json.load(f)


def record(server, capabilities, newest=True, relist_identical=True, **phases):
    notifications = {p: {} for p in ("opening", "listing", "idle", "relisting")}
    notifications.update(phases)
    return {"server": server, "version": "1.0.0", "outcome": "observed", "newest": newest,
            "session": {"capabilities": capabilities, "notifications": notifications,
                        "relistIdentical": relist_identical}}


class SummaryOnKnownRecords(unittest.TestCase):
    def test_each_figure_counts_what_it_says(self):
        records = [
            record("a", {"tools": {"listChanged": True}}, listing={sessions.LIST_CHANGED: 1}),
            record("b", {"tools": {"listChanged": True}, "logging": {}}, relist_identical=False,
                   idle={sessions.LIST_CHANGED: 2, "notifications/message": 3}),
            record("c", {"tools": {}}, opening={sessions.ACKNOWLEDGED: 1}),
            record("d", {"tools": {"listChanged": "yes"}}, newest=False),
            {"server": "e", "version": "1.0.0", "outcome": "failed", "newest": True,
             "reason": {"stage": "capture", "code": "server.connect_failed"}},
        ]
        s = sessions.summary(records)["newest"]
        self.assertEqual(s["releases"], 4)
        self.assertEqual(s["observed"], 3)
        self.assertEqual(s["declareToolsListChanged"], ["a@1.0.0", "b@1.0.0"])
        self.assertEqual(s["sentToolsListChanged"], ["a@1.0.0", "b@1.0.0"])
        self.assertEqual(s["sentToolsListChangedAfterListing"], ["b@1.0.0"])
        self.assertEqual(s["sentAnyNotification"], ["a@1.0.0", "b@1.0.0"],
                         "the subscription's acknowledgment is the client's own answer, not news")
        self.assertEqual(s["catalogChangedIdle"], ["b@1.0.0"])
        self.assertEqual(s["notificationMethods"], {"notifications/message": 1, sessions.LIST_CHANGED: 2})
        self.assertEqual(s["capabilityKeys"], {"logging": 1, "tools": 3})
        every = sessions.summary(records)["everyRelease"]
        self.assertEqual(every["observed"], 4)
        self.assertEqual(every["declareToolsListChanged"], ["a@1.0.0", "b@1.0.0"],
                         "only listChanged true declares it")

    def test_probe_totals_add_every_run(self):
        runs = [{"outcomes": {"ok": 3, "call.indeterminate": 1},
                 "listChanged": {"absorbedBeforeBinding": 2, "disturbedListings": 1,
                                 "invalidations": {"list_changed_during_call": 1}}},
                {"outcomes": {"ok": 4},
                 "listChanged": {"absorbedBeforeBinding": 0, "disturbedListings": 0,
                                 "invalidations": {"list_changed_during_call": 0}}}]
        t = real.totals([{"runs": runs}])
        self.assertEqual((t["probes"], t["calls"], t["ok"]), (2, 8, 7))
        self.assertEqual((t["absorbedBeforeBinding"], t["disturbedListings"]), (2, 1))
        self.assertEqual(t["invalidations"], {"list_changed_during_call": 1})


class CommittedFigures(unittest.TestCase):
    def test_sessions_summary_is_what_its_records_add_up_to(self):
        doc = load("sessions.json")
        self.assertEqual(doc["summary"], sessions.summary(doc["records"]))

    def test_every_study_server_has_a_newest_record(self):
        doc = load("sessions.json")
        with open(os.path.join(REPO, "study/drift/servers.json"), encoding="utf-8") as f:
            servers = {s["name"] for s in json.load(f)["servers"]}
        self.assertEqual({r["server"] for r in doc["records"] if r.get("newest")}, servers)

    def test_probe_totals_are_what_their_runs_add_up_to(self):
        doc = load("real.json")
        self.assertEqual(doc["totals"], real.totals(doc["targets"]))
        self.assertEqual(len(doc["targets"]), len(real.TARGETS))

    def test_experiment_md_quotes_the_committed_figures(self):
        with open(os.path.join(REPO, "docs/experiment.md"), encoding="utf-8") as f:
            text = " ".join(f.read().split())
        doc = load("sessions.json")
        series = [r for r in doc["records"] if r["server"] in ("memory", "everything", "filesystem", "sequential-thinking")]
        self.assertFalse([r for r in series if r["outcome"] == "observed" and
                          sessions.LIST_CHANGED in sessions.sent(r, ["idle", "relisting"])])
        phrases = quoted_figures(doc["summary"]["newest"], load("real.json")["totals"])
        for phrase in phrases + ["active reference servers (%d releases" % len(series)]:
            self.assertTrue(phrase in text, "docs/experiment.md does not say: " + phrase)


def quoted_figures(s, t):
    """The phrases docs/experiment.md's "Notification race" bullet must hold."""
    invalidated = sum(t["invalidations"].values())
    return [
        "%d of %d servers" % (len(s["declareToolsListChanged"]), s["observed"]),
        "%d sent `notifications/tools/list_changed`" % len(s["sentToolsListChanged"]),
        "%d after the first listing" % len(s["sentToolsListChangedAfterListing"]),
        "%d more sent only log messages" % (len(s["sentAnyNotification"]) - len(s["sentToolsListChanged"])),
        "%d calls in %d probes" % (t["calls"], t["probes"]),
        "%d succeeded" % t["ok"],
        "absorbed %d" % t["absorbedBeforeBinding"],
        "%d invalidations" % invalidated,
    ]


if __name__ == "__main__":
    unittest.main()
