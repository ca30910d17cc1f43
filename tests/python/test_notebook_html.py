"""Report._repr_html_, the report a notebook shows, rendered by headless
Chromium inside a page standing in for a notebook's output cell: the
timeline chart must be drawn (its script runs inside the iframe)."""
import os
import pathlib
import shutil
import struct
import subprocess
import zlib

import pytest

import hlomem

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)


def decode_png(data: bytes):
    """(width, height, rows of RGB tuples) of an 8-bit RGB/RGBA PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, header
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    pixels = []
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + pred) & 255
        pixels.append([tuple(line[x:x + 3]) for x in range(0, stride, channels)])
        previous = line
    return width, height, pixels


def count_near(pixels, rgb, tolerance):
    r, g, b = rgb
    return sum(1 for row in pixels for (pr, pg, pb) in row
               if abs(pr - r) <= tolerance and abs(pg - g) <= tolerance and abs(pb - b) <= tolerance)


def notebook_page(cell_html: str) -> str:
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'><style>"
            "body{font-family:sans-serif;margin:16px;background:#fff}"
            ".input{font-family:monospace;background:#f5f5f5;padding:8px;border:1px solid #e0e0e0}"
            "</style></head><body>"
            "<div class='input'>import hlomem<br>report = hlomem.analyze(compiled)<br>report</div>"
            f"<div class='output'>{cell_html}</div></body></html>")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                    "(HLOMEM_WITH_BROWSER=1 tools/setup.sh installs it)")
def test_repr_html_draws_the_timeline_in_chromium(gather_grad_dump, tmp_path):
    try:  # the report of the compiled gather-gradient case, as a notebook makes it
        from test_jax import compiled_gather_grad
        report = hlomem.analyze(compiled_gather_grad())
    except (ImportError, pytest.skip.Exception):  # no jax: the same program's dump
        report = hlomem.analyze(gather_grad_dump)
    assert report.total_bytes == 240526557204
    page = tmp_path / "notebook.html"
    page.write_text(notebook_page(report._repr_html_()))
    png = tmp_path / "notebook.png"
    # The iframe loads after the page: a cold Chromium (fonts, profile) may
    # take the screenshot before its script ran, so longer waits are tried.
    for budget_ms in (3000, 10000, 30000):
        # No network: a proxy that does not exist, so nothing can be fetched.
        subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", "--proxy-server=127.0.0.1:9", "--window-size=1100,1000",
                        f"--user-data-dir={tmp_path / 'profile'}",
                        f"--virtual-time-budget={budget_ms}", f"--screenshot={png}", page.as_uri()],
                       check=True, capture_output=True, timeout=180)
        width, height, pixels = decode_png(png.read_bytes())
        # The chart's area fill #3b76d9 and peak marker #d62728
        # (html_writer.cc): drawn only when the report's script ran inside
        # the iframe.
        area = count_near(pixels, (0x3b, 0x76, 0xd9), 12)
        peak = count_near(pixels, (0xd6, 0x27, 0x28), 12)
        # The marker is a 1-px line (antialiased when it falls between
        # pixels) and a dot of about 40 pixels.
        if area > 20000 and peak > 25:
            break
    assert (width, height) == (1100, 1000)
    assert area > 20000, "the live-bytes area is not drawn"
    assert peak > 25, "the peak marker is not drawn"
    if os.environ.get("HLOMEM_NOTEBOOK_PNG"):  # the picture in docs/python.md
        shutil.copy(png, os.environ["HLOMEM_NOTEBOOK_PNG"])
