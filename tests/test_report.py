"""Figures, tables and the HTML report rendered without a GPU from a real recorded run
(tests/data/h100-main), and the report opened in a real headless browser."""

import os
import shutil
from pathlib import Path

import pytest

from mmbench.core.registry import load_registry
from mmbench.plan.config import validate

from .conftest import DATA, ROOT
from .test_workflow import snakemake

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = Path(os.environ.get("CI_ARTIFACTS", ROOT / "ci-artifacts"))


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """A copy of the workflow with the recorded results folder, rendered with render_only."""
    work = tmp_path_factory.mktemp("render")
    for name in ("Snakefile", "workflow", "kernels", "config", "profiles", "environment.yml"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, work / name)
    shutil.copytree(DATA / "h100-main" / "results", work / "results")
    out = snakemake("--cores", "2", "--config", "render_only=true", cwd=work)
    assert out.returncode == 0, out.stderr[-3000:]
    rep = snakemake("--config", "render_only=true", "--report", "report.html", cwd=work)
    assert rep.returncode == 0, rep.stderr[-3000:]
    return work


def test_every_figure_and_table_is_rendered(rendered):
    res = rendered / "results"
    cfg = validate({}, load_registry())
    for fig in cfg["report"]["figures"]:
        for ext in ("png", "pdf"):
            p = res / "figures" / f"{fig}.{ext}"
            assert p.stat().st_size > 10_000, p
    for table in cfg["report"]["tables"]:
        for ext in ("csv", "md", "html", "tex"):
            assert (res / "report" / f"{table}.{ext}").stat().st_size > 100
    device = (res / "report" / "device_properties.md").read_text()
    assert "NVIDIA H100" in device and "multiprocessors" in device
    assert "\\begin{tabular}" in (res / "report" / "profiler_metrics.tex").read_text()
    import matplotlib.image

    img = matplotlib.image.imread(res / "figures" / "roofline.png")
    assert img.shape[0] > 400 and img.shape[1] > 600 and img.std() > 0.05  # not blank


def test_render_only_without_results_says_what_is_missing(tmp_path):
    for name in ("Snakefile", "workflow", "kernels", "config", "profiles", "environment.yml"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / name)
    out = snakemake("--cores", "1", "--config", "render_only=true", cwd=tmp_path)
    assert out.returncode != 0
    assert "results/tables/timings.csv is missing" in out.stderr


@pytest.mark.skipif(
    not CHROMIUM, reason="Chromium not installed (.ci/run installs Debian's chromium)"
)
def test_report_opens_in_a_browser_with_every_figure(rendered):
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on(
            "console",
            lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None,
        )
        page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
        try:
            page.goto((rendered / "report.html").as_uri())
            page.wait_for_load_state("load")
            page.get_by_text("Results", exact=True).first.click(timeout=20_000)
            page.get_by_text("Experiment main").first.click(timeout=20_000)
            page.get_by_text("Figures").first.wait_for(timeout=20_000)
            page.get_by_text("Tables").first.wait_for(timeout=20_000)
            figures = page.evaluate(
                """async () => {
                    const out = {};
                    for (const [path, r] of Object.entries(results)) {
                        if (!r.mime_type.startsWith("image/")) continue;
                        const img = new Image();
                        const ok = await new Promise(res => { img.onload = () => res(true);
                                                              img.onerror = () => res(false);
                                                              img.src = r.data_uri; });
                        out[path] = ok ? img.naturalWidth : 0;
                    }
                    return out;
                }"""
            )
            assert set(Path(p).stem for p in figures) == set(
                validate({}, load_registry())["report"]["figures"]
            )
            assert all(w > 300 for w in figures.values()), figures
            assert not errors, errors
        except BaseException:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "report-failure.png"), full_page=True)
            raise
        finally:
            browser.close()


@pytest.mark.parametrize(
    "preset,figures",
    [
        ("e3c", ["gflops_vs_n", "global_vs_kernel", "fraction_of_cublas"]),
        ("e3d", ["remainder_effect"]),
        ("ladder", ["ladder", "ladder_load", "roofline"]),
    ],
)
def test_sweep_figures_render_from_recorded_sweeps(tmp_path, preset, figures):
    """E3c, E3d and the ladder recorded on an H100 render without a GPU, notes computed from the
    data."""
    work = tmp_path / "work"
    shutil.copytree(DATA / f"h100-{preset}" / "results", work / "results")
    out = snakemake(
        "-s",
        str(ROOT / "Snakefile"),
        "--cores",
        "2",
        "--configfile",
        str(ROOT / "config" / "presets" / f"{preset}.yaml"),
        "--config",
        "render_only=true",
        cwd=work,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    for fig in figures:
        png = work / "results" / preset / "figures" / f"{fig}.png"
        assert png.stat().st_size > 30_000, png
    if preset == "ladder":  # the page of the ladder: its tables, rendered from the recorded run
        for table in ("ladder", "ladder_profile"):
            html = (work / "results" / preset / "report" / f"{table}.html").read_text()
            assert "warptile_db" in html and "mma_tf32" in html, table


def test_a_figure_without_data_is_not_made_and_says_why(tmp_path):
    """The main run's tables have no 1000..1100 sweep: remainder_effect is left out of the
    results and the report, with one line saying why, and no placeholder picture is drawn."""
    work = tmp_path / "work"
    shutil.copytree(DATA / "h100-main" / "results", work / "results")
    out = snakemake(
        "-s",
        str(ROOT / "Snakefile"),
        "--cores",
        "2",
        "--config",
        "render_only=true",
        "report={figures: [time_vs_n, remainder_effect]}",
        cwd=work,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    figures = work / "results" / "figures"
    assert (figures / "time_vs_n.png").exists()
    assert not (figures / "remainder_effect.png").exists()
    note = (work / "results" / "report" / "figures_left_out.txt").read_text()
    assert note.startswith("figure remainder_effect not made: ")
    assert "sizes 1000..1100" in note
    assert "figure remainder_effect not made" in out.stdout + out.stderr  # printed at the end


def test_report_tables_print_shares_with_one_decimal_and_name_a_nan_result():
    import pandas as pd

    from mmbench.report.report_tables import for_people

    df = pd.DataFrame(
        {
            "4096: % of ref": [63.0, 62.1],
            "first_mismatches": ["0:640: 12440.000000 - nan = nan", ""],
        }
    )
    out = for_people(df)
    assert list(out["4096: % of ref"]) == ["63.0", "62.1"]
    assert out.first_mismatches[0] == (
        "0:640: 12440 expected, NaN found (never written, or NaN computed)"
    )
