"""scripts/tests/macos_userland.py, the macOS userland the cluster suite's bats files and the registry
suite's e2e run in, is what its header claims: BWK awk, BSD date's -r and no -d or %N, BSD sed's -i
SUFFIX, BSD wc's columns, BSD paste's file operand, the GNU-only options refused, the GNU-only tools off
PATH. (The scripts run in it are tested by the .bats files; scripts/tests/macos.bats adds what a Mac's
clone brings.)
"""

import os
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

USERLAND = Path(__file__).resolve().parent / "macos_userland.py"


def generate(*args: str, env: dict = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(USERLAND), *args], capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    """The userland's PATH: its folder, then this PATH without the GNU-only tools."""
    if not shutil.which("original-awk"):
        pytest.fail("original-awk is missing: apt-get install original-awk (scripts/test.sh cluster installs it)")
    tmp = tmp_path_factory.mktemp("macos")
    done = generate(str(tmp / "bin"), os.environ["PATH"], str(tmp / "farm"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{tmp / 'bin'}:"), done.stdout
    return lines[0]


def sh(path: str, script: str, cwd=None) -> subprocess.CompletedProcess:
    """SCRIPT in bash on the userland's PATH."""
    return subprocess.run(
        ["/bin/bash", "-c", script], capture_output=True, text=True, cwd=cwd, timeout=60, env=dict(os.environ, PATH=path, LC_ALL="C")
    )


def test_awk_is_bwk_awk_which_refuses_what_gnu_awk_takes(path):
    assert "awk version" in sh(path, "awk -version").stdout
    assert sh(path, """awk 'BEGIN { x = "a[b"; sub(/[[=].*/, "", x) }'""").returncode != 0
    assert sh(path, "echo 'a b' | awk '{ print $2 }'").stdout == "b\n"


def test_the_gnu_only_tools_are_off_path_and_the_rest_of_their_folders_on_it(path):
    missing = generate("--missing").stdout.split()
    assert {"timeout", "nproc", "sha256sum", "tac", "flock", "setsid"} <= set(missing)
    assert [tool for tool in missing if shutil.which(tool, path=path)] == []
    for tool in ("ls", "cat", "bash", "python3", "head"):
        assert shutil.which(tool, path=path), f"{tool} went with the GNU-only tools"
    assert sh(path, "ls / | head -n 1").returncode == 0


def test_date_takes_r_seconds_and_refuses_d(path):
    assert sh(path, "date -u -r 86400 +%Y-%m-%d").stdout == "1970-01-02\n"
    for args in ("-d @0", "--date=@0", "-d@0"):
        done = sh(path, f"date {args}")
        assert done.returncode == 1 and "illegal option" in done.stderr, args
    assert sh(path, "date --utc").returncode == 1


def test_date_prints_n_for_nanoseconds_and_r_file_is_a_files_time(path, tmp_path):
    assert sh(path, "date -u -r 0 +%S.%N").stdout == "00.N\n"
    (tmp_path / "f").touch()
    os.utime(tmp_path / "f", (172800, 172800))
    assert sh(path, f"date -u -r {tmp_path / 'f'} +%Y-%m-%d").stdout == "1970-01-03\n"


def test_sed_i_takes_the_next_argument_as_the_backup_suffix(path, tmp_path):
    f = tmp_path / "f"
    f.write_text("a\n")
    assert sh(path, "sed -i 's/a/b/' f", cwd=tmp_path).returncode != 0, "GNU's sed -i form worked"
    assert f.read_text() == "a\n"
    assert sh(path, "sed -i '' 's/a/b/' f", cwd=tmp_path).returncode == 0
    assert f.read_text() == "b\n" and sorted(os.listdir(tmp_path)) == ["f"]
    assert sh(path, "sed -i .bak 's/b/c/' f", cwd=tmp_path).returncode == 0
    assert (f.read_text(), (tmp_path / "f.bak").read_text()) == ("c\n", "b\n")
    assert sh(path, "sed --in-place 's/c/d/' f", cwd=tmp_path).returncode == 1
    assert sh(path, "sed -i").returncode == 1


def test_wc_right_aligns_counts_in_8_columns(path, tmp_path):
    assert sh(path, "printf 'a\\nb\\nc\\n' | wc -l").stdout == "       3\n"
    (tmp_path / "f").write_text("one two\n")
    assert sh(path, "wc f", cwd=tmp_path).stdout == "       1       2       8 f\n"
    assert sh(path, "wc no-such-file").returncode != 0


def test_paste_needs_a_file_operand(path):
    done = sh(path, "printf '1\\n2\\n' | paste -s -d ,")
    assert done.returncode == 1 and "BSD paste needs a file" in done.stderr
    assert sh(path, "printf '1\\n2\\n' | paste -s -d , -").stdout == "1,2\n"
    assert sh(path, "printf '1\\n2\\n' | paste -sd, -").stdout == "1,2\n"


@pytest.mark.parametrize(
    "command",
    [
        "grep -P x /dev/null",
        "grep -oP x /dev/null",
        "grep --perl-regexp x /dev/null",
        "stat -c %s /",
        "stat --format=%s /",
        "base64 -w0 /dev/null",
        "find / -maxdepth 0 -printf x",
        "cp --parents /dev/null /tmp",
        "install -D /dev/null /tmp/x",
        "install --mode=0644 /dev/null /tmp/x",
        "xargs -r echo </dev/null",
        "mktemp --tmpdir",
        "readlink -e /",
        "readlink --canonicalize /",
        "sort -V /dev/null",
    ],
)
def test_gnu_only_options_are_refused(path, command):
    done = sh(path, command)
    assert done.returncode == 64, f"{command}: exit {done.returncode} {done.stderr}"
    assert done.stderr.startswith(f"{command.split()[0]}: illegal option") and "macOS userland" in done.stderr


@pytest.mark.parametrize(
    "command, out",
    [
        ("echo ab | grep -Eo 'a.'", "ab\n"),
        ("printf 'b\\na\\n' | sort", "a\nb\n"),
        ("printf a | base64", "YQ==\n"),
        ("readlink -f /bin/../bin/sh >/dev/null && echo ok", "ok\n"),
        ("echo x | xargs echo", "x\n"),
        ("find / -maxdepth 0 -name /", "/\n"),
    ],
)
def test_what_bsd_has_still_works(path, command, out):
    done = sh(path, command)
    assert (done.returncode, done.stdout) == (0, out), done.stderr


def test_without_original_awk_it_says_how_to_get_it(tmp_path):
    done = generate(str(tmp_path / "bin"), env=dict(os.environ, PATH=str(tmp_path)))
    assert done.returncode == 1 and "apt-get install original-awk" in done.stderr


def test_a_wrong_number_of_arguments_is_a_usage_error(tmp_path):
    done = generate(str(tmp_path / "a"), "b")
    assert done.returncode == 2 and "fix:" in done.stderr and not (tmp_path / "a").exists()


@pytest.fixture(scope="module")
def mac_path(tmp_path_factory):
    """The userland with --mac: this machine a Mac as the scripts ask about it."""
    tmp = tmp_path_factory.mktemp("mac")
    done = generate("--mac", str(tmp / "bin"), os.environ["PATH"], str(tmp / "farm"))
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[-1]


def test_a_mac_is_darwin_on_arm64_for_user_501_with_bash_32_first_and_its_python(mac_path):
    done = sh(
        mac_path,
        "uname; uname -s; uname -m; uname -sm; uname -p; id -u; id -un; id -gn; "
        'bash -c "echo \\$BASH_VERSION"; python3 -c "import sys; print(sys.version_info[:2])"',
    )
    assert done.returncode == 0, done.stderr
    want = re.search(r"^LOCUST_PYTHON_MIN_MACOS=(\d+)\.(\d+)", (USERLAND.parents[1] / "versions.env").read_text(), re.M)
    assert done.stdout.splitlines() == [
        "Darwin",
        "Darwin",
        "arm64",
        "Darwin arm64",
        "arm",
        "501",
        "mac",
        "staff",
        done.stdout.splitlines()[8],
        f"({want[1]}, {want[2]})",
    ], done.stdout
    assert re.match(r"3\.2\.\d+\(", done.stdout.splitlines()[8]), done.stdout  # 3.2.57, or LIVENESS_LAB_SIM_BASH32's


def test_a_macs_uname_and_id_refuse_what_bsds_do(mac_path):
    assert sh(mac_path, "uname --kernel-name").returncode != 0
    assert sh(mac_path, "uname -X").returncode != 0
    assert sh(mac_path, "id -Z").returncode != 0


def test_the_bash_32_stops_the_scripts_at_their_check(mac_path):
    done = sh(mac_path, f"bash {USERLAND.parents[1] / 'cluster-up.sh'} --help")
    assert done.returncode == 1 and "needs bash >= 4.1; this is bash 3.2" in done.stderr, done.stdout + done.stderr


def test_the_bash_chosen_by_hand_is_41_or_newer():
    chosen = generate("--bash").stdout.strip()
    done = subprocess.run([chosen, "-c", "echo ${BASH_VERSINFO[0]} ${BASH_VERSINFO[1]}"], capture_output=True, text=True)
    major, minor = map(int, done.stdout.split())
    assert (major, minor) >= (4, 1), done.stdout


@pytest.fixture
def userland_module(tmp_path, monkeypatch):
    """macos_userland imported here, its cache and logs in the test's folder, its waits recorded, not slept,
    and an apt-get stand-in first on PATH whose update fails FAIL_UPDATE times then succeeds and whose source
    always fails (a mirror that drops the connection): nothing is downloaded."""
    sys.path.insert(0, str(USERLAND.parent))
    try:
        import macos_userland
    finally:
        sys.path.pop(0)
    monkeypatch.setattr(macos_userland, "CACHE", tmp_path / "cache")
    monkeypatch.setenv("LIVENESS_LAB_LOGS", str(tmp_path / "logs"))
    monkeypatch.delenv("LIVENESS_LAB_SIM_BASH32", raising=False)
    waits = []
    monkeypatch.setattr(macos_userland.time, "sleep", waits.append)
    stub = tmp_path / "stub"
    stub.mkdir()
    (stub / "apt-get").write_text(
        "#!/bin/sh\n"
        f'n=$(cat "{tmp_path}/updates" 2>/dev/null || echo 0)\n'
        'case " $* " in\n'
        f'  *" update "*) echo $((n + 1)) >"{tmp_path}/updates"\n'
        # What Debian's apt-key does to check a signature (apt 2.6 runs it for apt-get update): GNU mktemp.
        '    d=$(mktemp --directory) || { echo "E: Unknown error executing apt-key"; exit 100; }; rmdir "$d"\n'
        '    [ "$n" -ge "${FAIL_UPDATE:-0}" ] && { echo "Reading package lists..."; exit 0; }\n'
        '    echo "E: Failed to fetch http://mirror/dists/bookworm/InRelease  Connection reset by peer"; exit 100 ;;\n'
        '  *) echo "E: Failed to fetch http://mirror/pool/main/b/bash/bash_5.2.15.orig.tar.gz  Connection timed out"; exit 100 ;;\n'
        "esac\n"
    )
    (stub / "apt-get").chmod(0o755)
    monkeypatch.setenv("PATH", f"{stub}{os.pathsep}{os.environ['PATH']}")
    return types.SimpleNamespace(module=macos_userland, waits=waits, logs=tmp_path / "logs", cache=tmp_path / "cache", tmp=tmp_path)


def failed_build(ns, capsys) -> str:
    with pytest.raises(SystemExit) as stopped:
        ns.module.bash32()
    assert stopped.value.code == 1
    return capsys.readouterr().err


# Issue 50, item 7: on a fresh machine the one apt-get of the stand-in's build failed once, with no retry,
# and the next build (minutes later, in the same suite) removed the folder holding its log.
def test_the_stand_ins_downloads_are_retried_with_back_off(userland_module, capsys, monkeypatch):
    ns = userland_module
    monkeypatch.setenv("FAIL_UPDATE", "2")  # update answers at its third try; the source download never does
    err = failed_build(ns, capsys)
    assert "failed at apt-get -o Dir::Etc::SourceList=" in err and "(exit 100, 4 tries)" in err, err
    assert ns.waits == [5, 10, 5, 10, 20], ns.waits  # update: two waits, then source: three
    log = Path(re.search(r"; log: (\S+)$", err.strip()).group(1))
    text = log.read_text()
    assert text.count("update  (try ") == 3 and text.count(" source --download-only bash/") == 4, text
    assert "Connection timed out" in text


def test_a_failed_builds_log_is_kept_where_the_error_names_it_and_a_later_build_keeps_it(userland_module, capsys, monkeypatch):
    ns = userland_module
    monkeypatch.setenv("FAIL_UPDATE", "99")
    first = Path(re.search(r"; log: (\S+)$", failed_build(ns, capsys).strip()).group(1))
    assert first.parent == ns.logs and first.name.startswith("bash-as-3.2.57-failed-")
    assert "Connection reset by peer" in first.read_text()
    assert not list((ns.cache / "build").iterdir())  # the work folder is gone, the log is not
    second = Path(re.search(r"; log: (\S+)$", failed_build(ns, capsys).strip()).group(1))
    assert second != first and first.exists() and second.exists()


def test_host_path_is_the_path_the_userland_was_made_from(path):
    sys.path.insert(0, str(USERLAND.parent))
    try:
        import macos_userland
    finally:
        sys.path.pop(0)
    made_from = [folder for folder in os.environ["PATH"].split(os.pathsep) if os.path.isdir(folder)]
    assert path != os.pathsep.join(made_from)  # a folder of links stands for one at least
    assert macos_userland.host_path(path) == os.pathsep.join(made_from)


# Issue 50, item 7, the cause: macos.bats builds the stand-in from the simulated userland (its setup_file),
# whose mktemp refuses GNU's --directory, which Debian's apt-key (run by apt-get update) needs: the build
# failed at apt-get there, every time, and passed minutes later from pytest's ordinary PATH.
def test_the_stand_in_is_built_with_this_machines_tools_even_from_the_simulated_userland(userland_module, capsys, monkeypatch):
    ns = userland_module
    done = generate(str(ns.tmp / "mac" / "bin"), os.environ["PATH"], str(ns.tmp / "mac" / "farm"))
    assert done.returncode == 0, done.stderr
    monkeypatch.setenv("PATH", done.stdout.splitlines()[-1])  # the userland, the apt-get stand-in's folder in it
    failed_build(ns, capsys)  # the source download fails: the stand-in has none
    log = next(ns.logs.glob("bash-as-3.2.57-failed-*.log")).read_text()
    assert log.count(" update  (try ") == 1 and "Unknown error executing apt-key" not in log, log
    assert log.count(" source --download-only bash/") == 4, log
