"""End-to-end tests of the cslsim Python package: compile programs with cslc, run them
through the vendor-compatible API, and check that bad calls raise the right errors.

cslc is found through the CSLC environment variable, else the repository's
target/release/cslc (build it with `cargo build --release -p cslc`), else PATH.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cslsim
from cslsim import errors
from cerebras.sdk.debug.debug_util import debug_util
from cerebras.sdk.runtime.sdkruntimepybind import (
    MemcpyDataType,
    MemcpyOrder,
    SdkRuntime,
    SdkTarget,
    Task,
    get_platform,
)
from cerebras.sdk.sdk_utils import input_array_to_u32, memcpy_view

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
TUTORIAL_01 = REPO / "examples" / "tutorials" / "01-gemv"
MULTI = HERE / "data" / "multi"
COLORS = HERE / "data" / "colors"

F32 = dict(streaming=False, data_type=MemcpyDataType.MEMCPY_32BIT,
           order=MemcpyOrder.ROW_MAJOR, nonblock=False)


def find_cslc():
    env = os.environ.get("CSLC")
    if env:
        return env
    built = REPO / "target" / "release" / "cslc"
    if built.is_file():
        return str(built)
    on_path = shutil.which("cslc")
    if on_path:
        return on_path
    pytest.fail(
        "cslc not found: build it with `cargo build --release -p cslc` at the repository "
        "root, or set CSLC=/path/to/cslc"
    )


def compile_program(src_dir, out_dir, *flags):
    cmd = [find_cslc(), "--arch=wse2", "./layout.csl", *flags, "--memcpy", "--channels=1",
           "-o", str(out_dir)]
    r = subprocess.run(cmd, cwd=src_dir, capture_output=True, text=True)
    assert r.returncode == 0, f"{' '.join(cmd)} failed:\n{r.stdout}\n{r.stderr}"
    return out_dir


@pytest.fixture(scope="session")
def gemv_out(tmp_path_factory):
    out = tmp_path_factory.mktemp("gemv") / "out"
    return compile_program(TUTORIAL_01, out, "--fabric-dims=8,3", "--fabric-offsets=4,1",
                           "--params=M:4,N:6")


@pytest.fixture(scope="session")
def multi_out(tmp_path_factory):
    out = tmp_path_factory.mktemp("multi") / "out"
    return compile_program(MULTI, out, "--fabric-dims=9,4", "--fabric-offsets=4,1")


def test_colors_flag_binds_colour_params(tmp_path):
    """`cslc --colors=NAME:ID` gives a colour-typed top-level param its colour."""
    out = compile_program(COLORS, tmp_path / "out", "--fabric-dims=9,3", "--fabric-offsets=4,1",
                          "--colors=link:5")
    # The compile metadata lists the bindings under "colors" (host scripts read it).
    meta = json.loads((out / "out.json").read_text())
    assert meta["colors"] == {"link": "5"}
    rt = running(out)
    rt.launch("pass", np.uint32(41), nonblock=False)
    got = np.zeros(4, np.uint32)
    rt.memcpy_d2h(got, rt.get_id("got"), 0, 0, 2, 1, 2, streaming=False,
                  data_type=MemcpyDataType.MEMCPY_32BIT, order=MemcpyOrder.ROW_MAJOR,
                  nonblock=False)
    rt.stop()
    # row-major: west PE {got[0], colour}, east PE {value received, colour}
    assert got.tolist() == [0, 5, 42, 5]
    for flag, says in (("--colors=lnk:5", "declares no such param"),
                       ("--colors=link:blue", "expects NAME:ID"),
                       ("--colors=link:24", "routable colors are 0 to 23")):
        cmd = [find_cslc(), "--arch=wse2", "./layout.csl", "--fabric-dims=9,3", flag,
               "--memcpy", "-o", str(tmp_path / "bad")]
        r = subprocess.run(cmd, cwd=COLORS, capture_output=True, text=True)
        assert r.returncode == 1 and says in r.stderr, r.stderr


def test_verbose_flag_is_accepted(tmp_path):
    """`cslc --verbose` (the vendor flag, used by some scripts) compiles and reports."""
    cmd = [find_cslc(), "--arch=wse2", "./layout.csl", "--fabric-dims=9,4",
           "--fabric-offsets=4,1", "--verbose", "--memcpy", "-o", str(tmp_path / "out")]
    r = subprocess.run(cmd, cwd=MULTI, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "program class(es) for a 2x2 rectangle" in r.stderr
    assert (tmp_path / "out" / "out.elf").is_file()


def running(path, **kw):
    rt = SdkRuntime(str(path), **kw)
    rt.load()
    rt.run()
    return rt


# ---- vendor-style host scripts -------------------------------------------------------

def test_tutorial_01_host_script(gemv_out):
    """The tutorial's run.py, unchanged, under the current interpreter."""
    r = subprocess.run([sys.executable, str(TUTORIAL_01 / "run.py"), "--name", str(gemv_out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS!" in r.stdout


def test_cs_python_runs_scripts(gemv_out, tmp_path):
    script = tmp_path / "hello.py"
    script.write_text(
        "import sys\n"
        "from cerebras.sdk.runtime.sdkruntimepybind import SdkRuntime\n"
        "print('args', sys.argv[1:])\n"
        "sys.exit(3)\n"
    )
    exe = shutil.which("cs_python", path=os.path.dirname(sys.executable)) or shutil.which(
        "cs_python")
    cmd = [exe] if exe else [sys.executable, "-m", "cslsim"]
    r = subprocess.run([*cmd, str(script), "--name", "out"], capture_output=True, text=True)
    assert r.returncode == 3, r.stderr
    assert "args ['--name', 'out']" in r.stdout


def test_gemv_in_process(gemv_out):
    M, N = 4, 6
    rng = np.random.default_rng(1)
    A = rng.standard_normal((M, N)).astype(np.float32)
    x = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(M).astype(np.float32)
    rt = running(gemv_out, suppress_simfab_trace=True, simfab_numthreads=4, msg_level="INFO")
    for name, data in (("A", A.ravel()), ("x", x), ("b", b)):
        task = rt.memcpy_h2d(rt.get_id(name), data, 0, 0, 1, 1, data.size, **F32)
        assert isinstance(task, Task)
    task = rt.launch("compute", nonblock=True)
    rt.task_wait(task)
    assert rt.is_task_done(task)
    y = np.full(M, -1.0, dtype=np.float32)
    buffer = y.__array_interface__["data"][0]
    rt.memcpy_d2h(y, rt.get_id("y"), 0, 0, 1, 1, M, **F32)
    assert y.__array_interface__["data"][0] == buffer  # written in place
    rt.stop()
    np.testing.assert_allclose(y, A @ x + b, rtol=1e-5, atol=1e-6)
    assert rt.cycles() > 0

    # debug_util reads the fabric of this run (absolute coordinates; rectangle at (4,1)).
    dbg = debug_util(str(gemv_out))
    np.testing.assert_array_equal(dbg.get_symbol(4, 1, "y", np.float32), y)
    rect = dbg.get_symbol_rect(((4, 1), (1, 1)), "A", np.float32)
    assert rect.shape == (1, 1, M * N)
    np.testing.assert_array_equal(rect[0, 0], A.ravel())
    np.testing.assert_array_equal(rt.read_symbol(4, 1, "x", np.float32), x)
    with pytest.raises(errors.RegionError):
        dbg.get_symbol(0, 0, "y", np.float32)
    with pytest.raises(errors.SymbolMissingError):
        dbg.get_symbol(4, 1, "no_such_variable", np.float32)
    # This program imports no <debug> module, so there is no trace to read.
    with pytest.raises(errors.SymbolMissingError, match="imports no <debug> module"):
        dbg.read_trace(4, 1, "trace")


def test_multi_pe_orders_16bit_and_launch_args(multi_out):
    rt = running(multi_out)
    v_id, h_id, out_id = rt.get_id("v"), rt.get_id("h"), rt.get_id("out")

    # 2x2 PEs x 4 elements, written row-major, read back column-major.
    hwl = np.arange(2 * 2 * 4, dtype=np.uint32).reshape(2, 2, 4) + 100
    rt.memcpy_h2d(v_id, hwl.ravel(), 0, 0, 2, 2, 4, **F32)
    col = np.zeros(16, dtype=np.uint32)
    rt.memcpy_d2h(col, v_id, 0, 0, 2, 2, 4, streaming=False,
                  data_type=MemcpyDataType.MEMCPY_32BIT, order=MemcpyOrder.COL_MAJOR,
                  nonblock=False)
    np.testing.assert_array_equal(col, hwl.ravel(order="F"))

    # One PE of the region only.
    one = np.zeros(4, dtype=np.int32)
    rt.memcpy_d2h(one, v_id, 1, 1, 1, 1, 4, **F32)
    np.testing.assert_array_equal(one, hwl[1, 1])

    # Row and column broadcast.
    rows = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], dtype=np.uint32)  # A[h][l]
    rt.memcpy_h2d_rowbcast(v_id, rows.ravel(), 0, 0, 2, 2, 4, **F32)
    got = np.zeros(16, dtype=np.uint32)
    rt.memcpy_d2h(got, v_id, 0, 0, 2, 2, 4, **F32)
    np.testing.assert_array_equal(got.reshape(2, 2, 4), np.stack([rows, rows], axis=1))
    cols = np.array([[9, 10, 11, 12], [13, 14, 15, 16]], dtype=np.uint32)  # A[w][l]
    rt.memcpy_h2d_colbcast(v_id, cols.ravel(), 0, 0, 2, 2, 4, **F32)
    rt.memcpy_d2h(got, v_id, 0, 0, 2, 2, 4, **F32)
    np.testing.assert_array_equal(got.reshape(2, 2, 4), np.stack([cols, cols], axis=0))

    # 16-bit data in 32-bit host words.
    h16 = np.array([-1, 2, -3, 4] * 4, dtype=np.int16)
    words = input_array_to_u32(h16, None, 4)
    assert words.dtype == np.uint32 and words.size == 16
    rt.memcpy_h2d(h_id, words, 0, 0, 2, 2, 4, streaming=False,
                  data_type=MemcpyDataType.MEMCPY_16BIT, order=MemcpyOrder.ROW_MAJOR,
                  nonblock=False)

    # Typed launch arguments: setup(n: i16, s: f32) sets out = {n*s, s} and h += n.
    rt.launch("setup", np.int16(3), np.float32(2.5), nonblock=False)
    out = np.zeros(8, dtype=np.float32)
    rt.memcpy_d2h(out, out_id, 0, 0, 2, 2, 2, **F32)
    np.testing.assert_array_equal(out, [7.5, 2.5] * 4)
    back = np.zeros(16, dtype=np.uint32)
    rt.memcpy_d2h(back, h_id, 0, 0, 2, 2, 4, streaming=False,
                  data_type=MemcpyDataType.MEMCPY_16BIT, order=MemcpyOrder.ROW_MAJOR,
                  nonblock=False)
    assert (back >> 16 == 0).all()  # upper halves are zero
    np.testing.assert_array_equal(memcpy_view(back, np.dtype(np.int16)), h16 + 3)

    # Python numbers work too; call() takes raw words.
    rt.launch("setup", -2, 1.0)
    rt.call("setup", np.array([5, np.float32(0.5).view(np.uint32)], dtype=np.uint32))
    rt.memcpy_d2h(out, out_id, 0, 0, 2, 2, 2, **F32)
    np.testing.assert_array_equal(out, [2.5, 0.5] * 4)

    # Wrong kinds and ranges of launch arguments.
    with pytest.raises(errors.LaunchArgumentError, match="integer"):
        rt.launch("setup", np.float32(1), np.float32(1))
    with pytest.raises(errors.LaunchArgumentError, match="does not fit"):
        rt.launch("setup", 70000, np.float32(1))
    with pytest.raises(errors.LaunchArgumentError, match="number"):
        rt.launch("setup", np.int16(1), "x")
    with pytest.raises(errors.LaunchArgumentError, match="takes 2 arguments"):
        rt.launch("setup", np.int16(1))
    with pytest.raises(errors.LaunchArgumentError):
        rt.call("setup", np.zeros(3, dtype=np.uint32))
    rt.stop()


# ---- errors --------------------------------------------------------------------------

def test_wrong_call_order(gemv_out):
    rt = SdkRuntime(str(gemv_out))
    x = np.zeros(6, dtype=np.float32)
    with pytest.raises(errors.RuntimeStateError, match="load"):
        rt.memcpy_h2d(rt.get_id("x"), x, 0, 0, 1, 1, 6, **F32)
    with pytest.raises(errors.RuntimeStateError):
        rt.run()
    rt.load()
    with pytest.raises(errors.RuntimeStateError, match="run"):
        rt.launch("compute")
    with pytest.raises(errors.RuntimeStateError):
        rt.load()
    rt.run()
    with pytest.raises(errors.RuntimeStateError):
        rt.run()
    rt.stop()
    with pytest.raises(errors.RuntimeStateError, match="stopped"):
        rt.memcpy_h2d(rt.get_id("x"), x, 0, 0, 1, 1, 6, **F32)
    with pytest.raises(errors.RuntimeStateError):
        rt.stop()
    # Every error is a RuntimeError.
    assert issubclass(errors.RuntimeStateError, RuntimeError)


def test_bad_symbols(gemv_out):
    rt = running(gemv_out)
    with pytest.raises(errors.UnknownSymbolError, match="exported: A, x, b, y, compute"):
        rt.get_id("nope")
    with pytest.raises(LookupError):
        rt.launch("nope")
    with pytest.raises(errors.UnknownSymbolError):
        rt.memcpy_h2d(99, np.zeros(6, np.float32), 0, 0, 1, 1, 6, **F32)
    with pytest.raises(errors.SymbolKindError):
        rt.memcpy_h2d(rt.get_id("compute"), np.zeros(6, np.float32), 0, 0, 1, 1, 6, **F32)
    with pytest.raises(errors.SymbolKindError):
        rt.launch("x")
    with pytest.raises(errors.ImmutableSymbolError):
        rt.memcpy_h2d(rt.get_id("y"), np.zeros(4, np.float32), 0, 0, 1, 1, 4, **F32)
    with pytest.raises(errors.LaunchArgumentError):
        rt.launch("compute", np.int16(1))
    rt.stop()


def test_bad_regions_and_arrays(gemv_out):
    rt = running(gemv_out)
    x_id = rt.get_id("x")
    x = np.zeros(6, dtype=np.float32)
    with pytest.raises(errors.RegionError, match="outside the 1x1 program rectangle"):
        rt.memcpy_h2d(x_id, x, 1, 0, 1, 1, 6, **F32)
    with pytest.raises(errors.RegionError):
        rt.memcpy_h2d(x_id, np.zeros(12, np.float32), 0, 0, 2, 1, 6, **F32)
    with pytest.raises(errors.RegionError):
        rt.memcpy_h2d(x_id, x, -1, 0, 1, 1, 6, **F32)
    with pytest.raises(errors.ArraySizeError, match="5 elements"):
        rt.memcpy_h2d(x_id, np.zeros(5, np.float32), 0, 0, 1, 1, 6, **F32)
    with pytest.raises(ValueError):
        rt.memcpy_d2h(np.zeros(7, np.float32), x_id, 0, 0, 1, 1, 6, **F32)
    with pytest.raises(errors.SymbolBoundsError):
        rt.memcpy_h2d(x_id, np.zeros(20000, np.float32), 0, 0, 1, 1, 20000, **F32)
    with pytest.raises(errors.DTypeError, match="float64"):
        rt.memcpy_h2d(x_id, np.zeros(6), 0, 0, 1, 1, 6, **F32)
    with pytest.raises(errors.DTypeError, match="input_array_to_u32"):
        rt.memcpy_h2d(x_id, np.zeros(6, np.float16), 0, 0, 1, 1, 6, **F32)
    with pytest.raises(TypeError):
        rt.memcpy_h2d(x_id, [0.0] * 6, 0, 0, 1, 1, 6, **F32)
    with pytest.raises(errors.DTypeError, match="contiguous"):
        rt.memcpy_d2h(np.zeros(12, np.float32)[::2], x_id, 0, 0, 1, 1, 6, **F32)
    with pytest.raises(TypeError, match="data_type"):
        rt.memcpy_h2d(x_id, x, 0, 0, 1, 1, 6, streaming=False, data_type=7,
                      order=MemcpyOrder.ROW_MAJOR, nonblock=False)
    # The runtime is still usable after all these.
    rt.memcpy_h2d(x_id, np.arange(6, dtype=np.float32), 0, 0, 1, 1, 6, **F32)
    rt.stop()


def test_constructor_errors(gemv_out, tmp_path):
    with pytest.raises(errors.NoSystemError, match="simulator"):
        SdkRuntime(str(gemv_out), cmaddr="10.0.0.1:9000")
    with pytest.raises(NotImplementedError):
        get_platform("10.0.0.1:9000")
    with pytest.raises(errors.ImageReadError, match="does not exist"):
        SdkRuntime(str(tmp_path / "missing"))
    with pytest.raises(errors.ImageReadError, match="out.elf"):
        SdkRuntime(str(tmp_path))
    bogus = tmp_path / "bogus.elf"
    bogus.write_bytes(b"not an elf file")
    with pytest.raises(errors.ImageReadError):
        SdkRuntime(str(bogus))
    with pytest.raises(TypeError, match="unexpected keyword"):
        SdkRuntime(str(gemv_out), frobnicate=1)
    with pytest.raises(errors.ImageReadError, match="wse2"):
        SdkRuntime(str(gemv_out), get_platform(None, target=SdkTarget.WSE3))
    # An .elf file works as well as the directory, and so does a platform.
    SdkRuntime(str(gemv_out / "out.elf"), get_platform(None, target=SdkTarget.WSE2))


def test_debug_util_needs_a_run(tmp_path):
    with pytest.raises(errors.DebugUnsupportedError, match="same"):
        debug_util(str(tmp_path))


def test_simulation_failures(multi_out):
    rt = running(multi_out)
    with pytest.raises(errors.DeadlockError, match="unblock_cmd_stream"):
        rt.launch("hang")
    # The failure is sticky: later commands report it again.
    with pytest.raises(errors.SimulationError):
        rt.memcpy_d2h(np.zeros(8, np.float32), rt.get_id("out"), 0, 0, 2, 2, 2, **F32)
    rt.stop()

    rt = running(multi_out, max_cycles=20_000)
    with pytest.raises(errors.CycleLimitError):
        rt.launch("spin")
    rt.stop()


def test_ctrl_c_interrupts_a_long_launch(multi_out):
    """Ctrl-C during a launch that would run for minutes raises KeyboardInterrupt within
    a fraction of a second (the binding runs Python's signal handlers every 50 ms)."""
    import signal
    import threading
    import time

    rt = running(multi_out, max_cycles=10**15)
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            rt.launch("spin")
    finally:
        timer.cancel()
    assert time.monotonic() - start < 10
    rt.stop()


def test_package_surface():
    assert cslsim.SdkRuntime is SdkRuntime
    assert int(MemcpyDataType.MEMCPY_16BIT) == 1 and int(MemcpyOrder.COL_MAJOR) == 1
    import cerebras.sdk.runtime.sdkruntimepybind as pybind

    for name in ("SdkRuntime", "MemcpyDataType", "MemcpyOrder", "SdkTarget", "Task",
                 "SimfabConfig", "get_platform", "SdkLayout", "Color", "RoutingPosition",
                 "get_edge_routing"):
        assert hasattr(pybind, name)
    # The SdkLayout API is usable (test_layout.py); it needs a platform.
    with pytest.raises(ValueError):
        pybind.SdkLayout(object())


# ---- timelines -----------------------------------------------------------------------

def test_perfetto_timeline(tmp_path):
    """`SdkRuntime(..., perfetto=FILE)` writes a Chrome trace-event JSON at stop(): one
    process per PE, task spans named after their functions, an arrow for the wavelet."""
    out = compile_program(COLORS, tmp_path / "out", "--fabric-dims=9,3", "--fabric-offsets=4,1",
                          "--colors=link:5")
    trace = tmp_path / "trace.json"
    rt = running(out, perfetto=str(trace))
    rt.launch("pass", np.uint32(41), nonblock=False)
    rt.stop()
    doc = json.loads(trace.read_text())
    events = doc["traceEvents"]
    pids = {e["args"]["name"]: e["pid"] for e in events
            if e["ph"] == "M" and e["name"] == "process_name"}
    assert set(pids) == {"PE(0,0)", "PE(1,0)"}
    tasks = [(e["pid"], e["name"]) for e in events if e["ph"] == "X" and e["cat"] == "task"]
    assert any(p == pids["PE(0,0)"] and n.endswith("pass") for p, n in tasks), tasks
    assert any(p == pids["PE(1,0)"] and n.endswith("recv") for p, n in tasks), tasks
    starts = [e for e in events if e["ph"] == "s"]
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert starts and all(ends[s["id"]]["pid"] == pids["PE(1,0)"] for s in starts)
    # The PE filter keeps one PE; perfetto_pes without perfetto is an error.
    one = tmp_path / "one.json"
    rt = running(out, perfetto=one, perfetto_pes="1,0")
    rt.launch("pass", np.uint32(41), nonblock=False)
    rt.stop()
    names = [e["args"]["name"] for e in json.loads(one.read_text())["traceEvents"]
             if e["ph"] == "M" and e["name"] == "process_name"]
    assert names == ["PE(1,0)"]
    with pytest.raises(ValueError):
        SdkRuntime(str(out), perfetto_pes="0,0")
    with pytest.raises(ValueError):
        SdkRuntime(str(out), perfetto=str(one), perfetto_pes="zero")
