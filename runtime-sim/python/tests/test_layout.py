"""Tests of the SdkLayout API (``cslsim.layout``, importable as the vendor's
``cerebras.sdk.runtime.sdkruntimepybind``): layouts of the small regions under
``tests/programs/sdklayout`` are compiled with ``cslc --sdklayout``, run with host
streams, and checked against values computed here; bad calls raise ``LayoutError``.

cslc is found as in ``test_runtime.py`` (CSLC, then target/release/cslc, then PATH).
"""

import os

import numpy as np
import pytest

from cerebras.geometry.geometry import IntRectangle, IntVector
from cerebras.sdk.runtime.sdkruntimepybind import (
    Color,
    Edge,
    Route,
    RoutingPosition,
    SdkLayout,
    SdkRuntime,
    SdkTarget,
    get_platform,
)
from cslsim.layout import LayoutError

from test_runtime import REPO, find_cslc

PROGRAMS = REPO / "tests" / "programs" / "sdklayout"


@pytest.fixture(autouse=True)
def cslc_env(monkeypatch):
    monkeypatch.setenv("CSLC", find_cslc())


def stream_layout(arch, weights):
    platform = get_platform(None, None, arch)
    layout = SdkLayout(platform)
    size = len(weights)
    scale = layout.create_code_region(str(PROGRAMS / "scale.csl"), "scale", 1, 1)
    rx, tx = scale.color("rx"), scale.color("tx")
    scale.set_param_all("size", size)
    scale.set_param_all(rx)
    scale.set_param_all(tx)
    scale.set_symbol_all("weights", np.array(weights, dtype=np.uint16), size, 1)
    rx_port = scale.create_input_port(
        rx, Edge.LEFT, [RoutingPosition().set_output([Route.RAMP])], size)
    tx_port = scale.create_output_port(
        tx, Edge.RIGHT, [RoutingPosition().set_input([Route.RAMP])], size)
    scale.place(2, 1)
    return platform, layout, layout.create_input_stream(rx_port), layout.create_output_stream(tx_port)


@pytest.mark.parametrize("arch", [SdkTarget.WSE2, SdkTarget.WSE3])
def test_streams_through_a_region(tmp_path, arch):
    weights = [3, 0, 2, 9, 1, 4, 4]
    platform, layout, sin, sout = stream_layout(arch, weights)
    artifacts = layout.compile(out_prefix=str(tmp_path / "out"))
    rt = SdkRuntime(artifacts, platform, memcpy_required=False)
    rt.load()
    rt.run()
    data = np.arange(10, 17, dtype=np.uint32)
    got = np.zeros(len(weights), dtype=np.uint32)
    rt.send(sin, data, nonblock=True)
    rt.receive(sout, got, len(weights), nonblock=True)
    rt.stop()
    expect = (data * np.array(weights, dtype=np.uint32)) & 0xFFFF
    assert np.array_equal(got & 0xFFFF, expect)


def test_connected_regions_and_set_param_coordinates(tmp_path):
    platform = get_platform(None, None, SdkTarget.WSE3)
    layout = SdkLayout(platform)
    src = layout.create_code_region(str(PROGRAMS / "source.csl"), "src", 1, 1)
    c = Color("c")
    src.set_param(IntVector(0, 0), "size", 4)
    src.set_param_range(IntRectangle(IntVector(0, 0), IntVector(1, 1)), "base", 40)
    src.set_param_all("tx", c)
    out = src.create_output_port(c, Edge.BOTTOM, [RoutingPosition().set_input([Route.RAMP])], 4)
    sink = layout.create_code_region(str(PROGRAMS / "sink.csl"), "sink", 1, 1)
    r = sink.color("rx")
    sink.set_param_all("size", 4)
    sink.set_param_all(r)
    inp = sink.create_input_port(r, Edge.TOP, [RoutingPosition().set_output([Route.RAMP])], 4)
    src.place(1, 0)
    sink.place(4, 3)
    layout.connect(out, inp)
    rt = SdkRuntime(layout.compile(out_prefix=str(tmp_path / "out")), platform,
                    memcpy_required=False)
    rt.load()
    rt.run()
    rt.stop()
    assert list(rt.read_symbol(4, 3, "result", dtype="uint16")) == [40, 41, 42, 43]


def test_bad_calls_raise_layout_errors(tmp_path):
    layout = SdkLayout(get_platform(None, None, SdkTarget.WSE2))
    with pytest.raises(LayoutError):
        layout.create_code_region(str(tmp_path / "missing.csl"), "x", 1, 1)
    region = layout.create_code_region(str(PROGRAMS / "sink.csl"), "sink", 2, 2)
    with pytest.raises(LayoutError):
        layout.create_code_region(str(PROGRAMS / "sink.csl"), "sink", 1, 1)
    with pytest.raises(LayoutError):
        region.set_param(IntVector(2, 0), "size", 1)
    with pytest.raises(LayoutError):
        region.set_param_all("size", "ten")
    with pytest.raises(LayoutError):
        RoutingPosition().set_input(["sideways"])
    with pytest.raises(LayoutError):
        region.paint_all(Color("c"), [])
    port = region.create_input_port(
        Color("c"), Edge.TOP, [RoutingPosition().set_output([Route.RAMP])], 3)
    with pytest.raises(LayoutError):
        layout.connect(port, port)
    # A layout the compiler rejects (the param `rx` is never set): LayoutError with
    # cslc's message.
    region.set_param_all("size", 3)
    with pytest.raises(LayoutError, match="rx"):
        layout.compile(out_prefix=str(tmp_path / "out"))
