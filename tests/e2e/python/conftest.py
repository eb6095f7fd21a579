"""Shared set-up of the Python interop tests (pytest; `make check` runs each module as a
CTest test, python.<module>).

What every module gets:
  nx(*args)              run build/nxprof (NXPROF_BIN), fail the test on a non-zero exit
  nxgo_path(workdir)     the Go test program of tests/e2e/go (NXGO, else built)
  REFERENCE              the reference schema from tests/data/reference (table -> fields),
                         the independent expectation for names, order, types, required
  arrow_type(field)      the Arrow type the reference type/format maps to
  llama_profiles         a llama-layer capture (2 NeuronCores, ~300K device records)
                         processed by nxprof --output-file: its set of profiles,
                         {"system": the system profile, "nd0-nc0": the device profile
                         of NeuronCore 0, "nd0-nc1": ... of NeuronCore 1} (profile_set)
  llama_profile          llama_profiles["nd0-nc0"]: one device profile (~170K records)
  llama_devices          [the device profiles of llama_profiles], in DeviceProfileList order
  split_profiles, split_profile, split_devices
                         the same capture with --max-rows-per-file 40000
  framework_profiles     each real PyTorch trace of tests/data/chrome-traces alone in a
                         capture, processed: {trace file name: profile dir} (each a
                         system profile without device profiles)
  profile_files(dir)     the Parquet files of a profile, {table: [files in split order]}
  profile_set(dir)       the profiles of one run's output (a system profile and the device
                         profiles its DeviceProfileList names): {key: dir}
  SYSTEM_TABLES          the tables a system profile may hold (Metadata, SchemaFields and
                         Warning are in device profiles too; every other table is a
                         device profile's)
  spark                  a local[2] SparkSession for the test module
  serving(data_path, *options, env=None)
                         `nxprof serve --data-path data_path [options]` on a free port,
                         accepting connections: (port, pid); fails the test if the server
                         died before the block ends
  http_get(port, path), http_get_json(port, path)
                         one GET on 127.0.0.1: (status, body bytes), or (status, the body
                         parsed when it is a JSON object or array, else its bytes)
  serving_api(data_path, *options)
                         `nxprof serve` on free ports (--port 0 --api-port 0 unless given):
                         ({"ui": port or None, "api": port or None}, the process), the
                         ports read from the lines it prints
  http_request(port, method, path, body=None, headers=None)
                         one request (a JSON body as application/json): (status, headers
                         with lower-case names, body bytes)
  query_api_search(port, name, body)
                         POST /api/v1/db/<name>/_search: (status, the parsed answer)
"""
import contextlib
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parents[3]
BIN = Path(os.environ.get("NXPROF_BIN", ROOT / "build" / "nxprof"))
TEST_DATA = Path(os.environ.get("NXPROF_TEST_DATA", ROOT / "tests" / "data"))
CHROME_TRACES = sorted((TEST_DATA / "chrome-traces").glob("*.json.gz"))


HANG_GUARD_S = 120   # client timeout of http_get: guards against a hang, times nothing


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serving(data_path, *options, env=None):
    """`nxprof serve --data-path data_path [options]` on a free port, accepting
    connections: (port, pid). The server must still be running when the block ends."""
    port = free_port()
    p = subprocess.Popen([str(BIN), "serve", "--data-path", str(data_path), "--port", str(port), *options],
                         env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            time.sleep(0.05)
        yield port, p.pid
        assert p.poll() is None, "the server is still running"
    finally:
        p.terminate()
        p.wait(timeout=10)


def http_get(port, path):
    """One GET on 127.0.0.1:port: (status, body bytes)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=HANG_GUARD_S)
    c.request("GET", path)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, body


def http_get_json(port, path):
    """(status, the body parsed when it is a JSON object or array, else its bytes)."""
    status, body = http_get(port, path)
    return status, (json.loads(body) if body[:1] in (b"{", b"[") else body)


def nxgo_path(workdir):
    """The Go test program: NXGO (built once by CTest's go.build_nxgo), else built here."""
    if os.environ.get("NXGO"):
        exe = Path(os.environ["NXGO"])
        assert exe.is_file(), f"NXGO={exe} does not exist (ctest builds it in go.build_nxgo)"
        return exe
    exe = workdir / "nxgo"
    env = dict(os.environ, PATH=os.environ.get("PATH", "") + ":/usr/local/go/bin")
    r = subprocess.run(["go", "build", "-mod=readonly", "-o", str(exe), "."], cwd=ROOT / "tests" / "e2e" / "go",
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, f"go build of tests/e2e/go failed:\n{r.stderr}"
    return exe


def nx(*args, check=True, cwd=None):
    """Runs nxprof; returns the CompletedProcess (text). check: a non-zero exit fails."""
    r = subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True, cwd=cwd)
    if check and r.returncode != 0:
        pytest.fail(f"nxprof {' '.join(map(str, args))} exited {r.returncode}:\n{r.stderr}")
    return r


def _read_reference():
    tables = {}
    lines = (TEST_DATA / "reference" / "profile-schema-7.4.0.tsv").read_text().splitlines()
    header = lines[0].split("\t")
    for line in lines[1:]:
        row = dict(zip(header, line.split("\t")))
        tables.setdefault(row["table"], []).append(row)
    return tables


REFERENCE = _read_reference()

_SCALARS = {
    ("integer", "int64"): pa.int64(),
    ("integer", "int32"): pa.int32(),
    ("integer", ""): pa.int64(),
    ("number", "float"): pa.float32(),
    ("number", "double"): pa.float64(),
    ("string", ""): pa.string(),
    ("boolean", ""): pa.bool_(),
}


def arrow_type(field):
    """The Arrow type of a reference field (type, format), as the brief's mapping says:
    int64/int32/float/double/string/boolean, and arrays of integer/string as lists."""
    t, fmt = field["type"], field["format"]
    m = re.fullmatch(r"array of (integer|string)", t)
    if m:
        return pa.list_(pa.int64() if m.group(1) == "integer" else pa.string())
    return _SCALARS[(t, fmt)]


def written_tables():
    """Tables a profile may hold: the reference's, less the transient ones the catalogue
    marks (computed by the API, never written)."""
    transient = set()
    for line in (ROOT / "src" / "schema" / "catalogue.tsv").read_text().splitlines():
        cols = line.split("\t")
        if cols[0] == "table" and cols[3] == "yes":
            transient.add(cols[1])
    return {t: f for t, f in REFERENCE.items() if t not in transient}


_SPLIT = re.compile(r"^(?P<table>[A-Za-z]+?)(?:_(?P<part>\d+))?\.parquet$")


def profile_files(directory):
    """{table: [Path, ...]}: T.parquet, or T_0.parquet, T_1.parquet, ... in part order."""
    out = {}
    for p in sorted(Path(directory).glob("*.parquet")):
        m = _SPLIT.match(p.name)
        assert m, f"unexpected file name in a profile: {p}"
        out.setdefault(m["table"], []).append((int(m["part"] or -1), p))
    return {t: [p for _, p in sorted(v)] for t, v in out.items()}


# The tables a system profile may hold (docs/architecture.md, "Output layout").
SYSTEM_TABLES = {"SystemProfileEvents", "CpuUsage", "HostMemUsage", "SystemProfileHbmUsage", "HbmUsageSummaryByType",
                 "SystemProfileMetadata", "DeviceProfileList", "Metadata", "SchemaFields", "Warning"}


def device_profile_dir(system_dir, name):
    """Where the device profile `name` of a system profile lies: DIR/devices/<name>/ (an
    --output-file run), else the sibling <name>@latest/ (a --data-path run)."""
    system_dir = Path(system_dir)
    nested = system_dir / "devices" / name
    if nested.is_dir():
        return nested
    return system_dir.parent / f"{name}@latest"


def profile_set(system_dir):
    """{"system": system_dir, "<nd..-nc..>": device profile dir, ...}: the profiles of a
    system profile, found through its DeviceProfileList (keys are the device profile names
    less the system profile's name and '-'), in DeviceProfileList order."""
    system_dir = Path(system_dir)
    out = {"system": system_dir}
    dpl = system_dir / "DeviceProfileList.parquet"
    if not dpl.exists():
        return out
    name = pq.read_table(system_dir / "Metadata.parquet").column("profile_name")[0].as_py()
    for dev in pq.read_table(dpl).column("device_profile_name").to_pylist():
        d = device_profile_dir(system_dir, dev)
        assert d.is_dir(), f"{system_dir}: DeviceProfileList names {dev}, which is neither {system_dir}/devices/{dev} nor {d}"
        key = dev[len(name) + 1:] if dev.startswith(name + "-") else dev
        assert key not in out, f"{system_dir}: device profile {dev} listed twice"
        out[key] = d
    return out


@pytest.fixture(scope="session")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("nxprof-py")


@pytest.fixture(scope="session")
def llama_capture(workdir):
    cap = workdir / "llama-cap"
    nx("synth", "--out", cap, "--preset", "llama-layer", "--events", "300000", "--seed", "7")
    return cap


def _processed_set(llama_capture, prof, *extra):
    nx("process", llama_capture, "--output-file", prof, *extra)
    profiles = profile_set(prof)
    assert list(profiles) == ["system", "nd0-nc0", "nd0-nc1"], profiles
    return profiles


@pytest.fixture(scope="session")
def llama_profiles(workdir, llama_capture):
    return _processed_set(llama_capture, workdir / "llama")


@pytest.fixture(scope="session")
def llama_profile(llama_profiles):
    return llama_profiles["nd0-nc0"]


@pytest.fixture(scope="session")
def llama_devices(llama_profiles):
    return [d for k, d in llama_profiles.items() if k != "system"]


@pytest.fixture(scope="session")
def split_profiles(workdir, llama_capture):
    return _processed_set(llama_capture, workdir / "llama-split", "--max-rows-per-file", "40000")


@pytest.fixture(scope="session")
def split_profile(split_profiles):
    return split_profiles["nd0-nc0"]


@pytest.fixture(scope="session")
def split_devices(split_profiles):
    return [d for k, d in split_profiles.items() if k != "system"]


@pytest.fixture(scope="session")
def framework_profiles(workdir):
    assert CHROME_TRACES, f"no real PyTorch traces in {TEST_DATA / 'chrome-traces'}"
    out = {}
    for trace in CHROME_TRACES:
        cap = workdir / f"fw-cap-{trace.name}"
        cap.mkdir()
        shutil.copy(trace, cap / trace.name)
        prof = workdir / f"fw-{trace.name}"
        nx("process", cap, "--output-file", prof)
        out[trace.name] = prof
    return out


@pytest.fixture(scope="module")
def spark(request):
    """One local SparkSession (2 cores) per test module, stopped at its end."""
    from pyspark.sql import SparkSession

    s = (SparkSession.builder.master("local[2]").appName(f"nxprof-{request.module.__name__}")
         .config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "2")
         .config("spark.driver.memory", "1g")
         # a short-lived JVM on two cores: the C1 compiler alone warms up sooner
         .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
         .config("spark.driver.host", "127.0.0.1")
         .config("spark.driver.bindAddress", "127.0.0.1")
         .getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


@contextlib.contextmanager
def serving_api(data_path, *options):
    """`nxprof serve` with options on free ports: ({"ui": port or None, "api": port or
    None}, the process). The ports come from the lines it prints (docs/api.md)."""
    args = [str(BIN), "serve", "--data-path", str(data_path), *options]
    if "--port" not in options:
        args += ["--port", "0"]
    if "--api-port" not in options:
        args += ["--api-port", "0"]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = p.stdout.readline()
        m = re.match(r"nxprof: serving .* at http://127\.0\.0\.1:(\d+)/( \(API only, no web pages\))?$", first)
        assert m, (first, p.stderr.read() if p.poll() is not None else "")
        ports = {"ui": None if m[2] else int(m[1]), "api": int(m[1]) if m[2] else None}
        if not m[2]:
            second = p.stdout.readline()
            m2 = re.match(r"nxprof: query API at http://127\.0\.0\.1:(\d+)/api/v1/$", second)
            assert m2, second
            ports["api"] = int(m2[1])
        yield ports, p
        assert p.poll() is None, "the server is still running"
    finally:
        p.terminate()
        p.wait(timeout=10)


def http_request(port, method, path, body=None, headers=None):
    """One request: (status, headers, body bytes). body: bytes or a JSON-able value."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=HANG_GUARD_S)
    h = {"Content-Type": "application/json"} if body is not None else {}
    h.update(headers or {})
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    c.request(method, path, body=data, headers=h)
    r = c.getresponse()
    out = (r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    c.close()
    return out


def query_api_search(port, name, body, headers=None):
    status, _, raw = http_request(port, "POST", f"/api/v1/db/{name}/_search", body, headers)
    return status, json.loads(raw)
