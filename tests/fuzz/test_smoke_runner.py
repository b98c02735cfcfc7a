"""The fuzz smoke runner reports figures from libFuzzer's output and fails on any crash."""

import sys

from fuzz import smoke

LOG = ("INFO: Seed: 1\n#7\tINITED cov: 85 ft: 91 corp: 6/382b exec/s: 0 rss: 183Mb\n"
       "#5000\tDONE   cov: 120 ft: 300 corp: 40/2Kb lim: 4096 exec/s: 900 rss: 190Mb\n"
       "Done 5000 runs in 5 second(s)\n")


def _fake_fuzzer(tmp_path, body: str):
    script = tmp_path / "fake_fuzzer.py"
    script.write_text("import sys\n" + body)
    return [sys.executable, str(script)]


def test_figures_come_from_the_last_status_line(tmp_path):
    cmd = _fake_fuzzer(tmp_path, f"sys.stderr.write({LOG!r})\n")
    out = smoke._run("fake", cmd, tmp_path / "corpus", tmp_path / "art", 1)
    assert (out.status, out.runs, out.cov, out.ft, out.corpus) == ("ok", 5000, 120, 300, 40)


def test_a_crash_fails_the_run_and_names_the_reproducer(tmp_path):
    body = ("prefix = [a for a in sys.argv if a.startswith('-artifact_prefix=')][0]"
            ".split('=', 1)[1]\nopen(prefix + 'crash-abc', 'wb').write(b'x')\n"
            "sys.stderr.write('==1== ERROR: libFuzzer: deadly signal\\n')\nsys.exit(77)\n")
    out = smoke._run("fake", _fake_fuzzer(tmp_path, body), tmp_path / "corpus",
                     tmp_path / "art", 1)
    assert out.status == "CRASH" and "fake-crash-abc" in out.detail and "deadly" in out.detail
    assert "CRASH" in smoke._table([out])
