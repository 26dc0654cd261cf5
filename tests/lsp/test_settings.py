"""Settings: defaults, valid values, and invalid values reported and replaced by defaults."""
from __future__ import annotations

from tilelsp.server.settings import Settings, parse_settings


def test_defaults_when_missing():
    s, warnings = parse_settings(None)
    assert s == Settings() and warnings == []
    assert s.targets == ("sm_90a",) and s.debounceMs == 200 and s.trustWorkspace is False


def test_valid_values_are_taken():
    s, warnings = parse_settings({"targets": ["sm_80", "sm_90a"], "debounceMs": 0, "trustWorkspace": True,
                                  "verifyDevice": "cpu", "interpreter": "/usr/bin/python3"})
    assert warnings == []
    assert s.targets == ("sm_80", "sm_90a") and s.debounceMs == 0 and s.trustWorkspace and s.verifyDevice == "cpu"
    assert s.extra == {"interpreter": "/usr/bin/python3"}


def test_invalid_values_fall_back_with_a_warning():
    s, warnings = parse_settings({"targets": ["sm_80", "bogus"], "debounceMs": "fast", "checkOnChange": "yes",
                                  "verifyDevice": "tpu"})
    assert s.targets == ("sm_90a",) and s.debounceMs == 200 and s.checkOnChange is True and s.verifyDevice == "auto"
    assert len(warnings) == 4 and all(w.startswith("tilelsp.") for w in warnings)


def test_non_object_settings():
    s, warnings = parse_settings([1, 2])
    assert s == Settings() and "must be an object" in warnings[0]


def test_stale_lowering_results_are_dropped():
    from tilelsp.server.state import State

    state = State()
    doc = state.open("file:///a.py", 1, "x = 1\n")
    doc.lower_requested = 1
    state.update(doc.uri, 2, "x = 2\n")
    doc.lower_requested = 2  # saved again while the first lowering ran
    assert state.accept_lowering(doc, 1, [{"kernel": "old"}], []) is False
    assert state.accept_lowering(doc, 2, [{"kernel": "new"}], []) is True
    assert doc.lower_entries == [{"kernel": "new"}] and doc.lower_version == 2
    state.close(doc.uri)
    assert state.accept_lowering(doc, 2, [], []) is False
