"""The benchmark's results files carry their provenance; the book shows them apart.

``python -m attnbook.bench`` writes a results file whose ``provenance`` says where its
numbers come from (device, driver, cores, versions, commit, date). The unit tests check
the provenance functions, every results file committed under ``book/data/bench/``, and
the command line (with the measurements faked: no timing here). The ``book`` tests read
the built cost page and ledger: each file's numbers stand in their own column and line,
under the file's provenance, apart from this build's.
"""

import json
import subprocess
from pathlib import Path

import pytest

from attnbook import bench
from buildfiles import ROOT, soup

DATA = ROOT / "book" / "data" / "bench"
COMMITTED = sorted(DATA.glob("*.json"))
GPU_FIXTURE = ROOT / "tests" / "fixtures" / "bench-gpu-test-fixture.json"   # made up, for tests only


def results_with(provenance):
    return {"provenance": provenance, "settings": {"rnn_vs_attention": {"batch": 8}},
            "rnn_vs_attention": {key: [1.0, 2.0] for key in bench.TIMING_KEYS}}


# --- provenance --------------------------------------------------------------------------


def test_provenance_names_device_versions_commit_and_date():
    prov = bench.provenance("a note")
    assert set(prov) == set(bench.PROVENANCE_KEYS)
    assert prov["device"]["kind"] in ("CPU", "GPU", "TPU") and prov["device"]["model"]
    assert prov["cpu_count"] >= 1 and prov["tensorflow"] and prov["keras"] and prov["label"] == "a note"
    assert (prov["driver"] is None) == (prov["device"]["kind"] != "GPU")
    checkout = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(bench.__file__).resolve().parent,
                              capture_output=True, text=True)
    if checkout.returncode == 0:   # the package runs from a checkout: its commit
        assert prov["commit"]["sha"] == checkout.stdout.strip()
    else:                          # an installed wheel (make wheel-test): no checkout to name
        assert prov["commit"] is None
    assert prov["date"].endswith("+00:00")   # UTC
    bench.check_results(results_with(prov))


def test_the_cpu_model_is_read_from_cpuinfo(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nmodel name\t: Example CPU @ 2.0GHz\n", encoding="utf-8")
    assert bench._cpu_model(cpuinfo) == "Example CPU @ 2.0GHz"
    assert bench._cpu_model(tmp_path / "missing")   # falls back to the platform module


def test_the_commit_is_none_outside_a_checkout_and_dirty_when_changed(tmp_path):
    assert bench._commit(tmp_path) is None
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    subprocess.run([*git, "add", "a.py"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "a"], cwd=tmp_path, check=True)
    clean = bench._commit(tmp_path)
    assert len(clean["sha"]) == 40 and clean["dirty"] is False
    (tmp_path / "a.py").write_text("x = 2\n", encoding="utf-8")
    assert bench._commit(tmp_path) == {"sha": clean["sha"], "dirty": True}


@pytest.mark.parametrize("change, match", [
    (lambda p: p.pop("commit"), "缺 \\['commit'\\]"),
    (lambda p: p["device"].update(kind="FPGA"), "设备"),
    (lambda p: p["device"].update(kind="GPU"), "驱动"),
    (lambda p: p.update(commit={"sha": 1}), "提交"),
    (lambda p: p.update(date="yesterday"), "isoformat"),
])
def test_incomplete_provenance_is_refused(change, match):
    prov = json.loads(GPU_FIXTURE.read_text(encoding="utf-8"))["provenance"]
    prov["device"]["kind"], prov["driver"] = "CPU", None
    bench.check_results(results_with(json.loads(json.dumps(prov))))
    change(prov)
    with pytest.raises(ValueError, match=match):
        bench.check_results(results_with(prov))
    with pytest.raises(ValueError, match="provenance"):
        bench.check_results({"machine": {}})   # a results file of the first format


def test_every_committed_results_file_carries_its_provenance():
    """Each file under book/data/bench/ is complete, and says where it was measured."""
    assert COMMITTED, "no results file under book/data/bench/"
    for name, results in bench.load_results(DATA):
        prov = results["provenance"]
        assert results["format"] == bench.RESULTS_FORMAT, name
        assert prov["commit"] is not None and not prov["commit"]["dirty"], f"{name}: measured from uncommitted code"
        assert prov["device"]["kind"].lower() in name, f"{name}: the name says the device kind"
        assert len(results["rnn_vs_attention"]["n"]) >= 3, name
    assert not (DATA / GPU_FIXTURE.name).exists(), "the test fixture is not a measurement"


def test_file_values_give_one_item_per_file_with_its_label():
    files = bench.load_results(DATA) + [(GPU_FIXTURE.name, json.loads(GPU_FIXTURE.read_text(encoding="utf-8")))]
    values = bench.file_values(files)
    assert all(len(v) == len(files) for v in values.values()), {k: len(v) for k, v in values.items()}
    assert values["device_kind"][-1] == "GPU" and values["label"][-1].startswith("GPU：Test Fixture GPU")
    assert "驱动 000.00" in values["label"][-1] and "提交 000000000000" in values["label"][-1]
    assert values["train_throughput_attention"][-1][0] == pytest.approx(8 * 64 / 2e-3)
    empty = bench.file_values([])
    assert set(empty) == set(values) and all(v == [] for v in empty.values())


def test_the_table_marks_its_heads_and_escapes_its_cells():
    table = bench.Table("标题", ["来源", "本次构建", "结果文件 a.json"], [["设备", "CPU", "<GPU>"]])
    markup = table._repr_html_()
    assert "<caption>标题</caption>" in markup and markup.count('scope="col"') == 3
    assert '<th scope="row">设备</th>' in markup and '&lt;<span lang="en">GPU</span>&gt;' in markup
    assert repr(table).splitlines()[1] == "来源｜本次构建｜结果文件 a.json"


def test_the_command_line_writes_provenance_into_the_results_file(tmp_path, monkeypatch):
    """main(), its measurements faked: the file it writes is read back with its provenance."""
    mha = {"forward_speedup_vs_keras": 1.5, "forward_backward_speedup_vs_keras": 1.5, "forward_gflops": 1.0,
           "forward_fraction_of_matmul": 0.8, "matmul_gflops": 1.0}
    rows = {"n": [512, 1024, 2048, 4096], "time_ms": [1.0, 2.0, 4.0, 8.0], "peak_mib": [1.0, 2.0, 4.0, 8.0]}
    seen = {}
    monkeypatch.setattr(bench, "measure_mha", lambda **kw: mha)
    monkeypatch.setattr(bench, "measure_variants", lambda lengths, **kw: {k: dict(rows) for k in
                                                                          ("full", "chunked", "window", "linear")})
    monkeypatch.setattr(bench, "measure_rnn_vs_attention",
                        lambda lengths, **kw: seen.update(kw) or {key: [1.0, 2.0, 3.0] for key in bench.TIMING_KEYS})
    monkeypatch.setattr(bench, "_save_figures", lambda *args: None)
    bench.main(["--quick", "--out", str(tmp_path), "--label", "测试机"])
    [(name, results)] = bench.load_results(tmp_path)
    assert name == "results.json" and results["provenance"]["label"] == "测试机"
    assert results["settings"]["rnn_vs_attention"]["batch"] == seen["batch"] == 8


# --- the built book: the files' numbers apart from this build's ----------------------------


@pytest.mark.book
def test_the_cost_page_shows_each_file_in_its_own_column_under_its_provenance():
    table = soup("book/ch04/cost").select_one("table.bench-table")
    assert table is not None and "出处" in table.caption.get_text()
    heads = [th.get_text() for th in table.select("thead th")]
    assert heads[1] == "本次构建实测" and heads[2:] == [f"结果文件 {path.name}" for path in COMMITTED]
    rows = {tr.th.get_text(): [td.get_text() for td in tr.select("td")]
            for tr in table.select("tbody tr")}
    for column, (name, results) in enumerate(bench.load_results(DATA), start=1):
        prov = results["provenance"]
        assert rows["设备"][column] == f"{prov['device']['kind']}：{prov['device']['model']}", name
        assert rows["逻辑核数"][column] == str(prov["cpu_count"])
        assert rows["TensorFlow / Keras"][column] == f"{prov['tensorflow']} / {prov['keras']}"
        assert rows["测量时的代码提交"][column] == bench.commit_text(prov) and rows["日期（UTC）"][column] == prov["date"][:10]
        summary = bench.timing_summary(results["rnn_vs_attention"], results["settings"]["rnn_vs_attention"]["batch"])
        assert rows["训练吞吐，注意力（位置/秒）"][column] == "、".join(
            f"{t:.0f}" for t in summary["train_throughput_attention"])
        assert rows["训练吞吐，注意力（位置/秒）"][column] != rows["训练吞吐，注意力（位置/秒）"][0]


@pytest.mark.book
@pytest.mark.parametrize("claim_id", ["training-throughput", "short-sequences"])
def test_the_ledger_rows_show_each_file_apart_and_say_how_it_counts(claim_id):
    row = soup("book/claims").find("tr", id=f"claim-{claim_id}")
    values = row.find_all("td")[2]
    build = values.select_one("p.claim-values:not(.claim-file-values)").get_text()
    assert build.startswith("本次构建：")
    lines = [p.get_text() for p in values.select("p.claim-file-values")]
    assert len(lines) == len(COMMITTED)
    reason = row.select_one(".claim-reason").get_text()
    for path, line in zip(COMMITTED, lines):
        assert line.startswith(f"结果文件 {path.name}（CPU：") and "个逻辑核" in line and "提交 " in line
        assert path.name not in build
        assert f"结果文件 {path.name}" in reason and "CPU（" in reason
        # the parallel-hardware row never takes a CPU file's numbers; the speed row takes
        # them as another configuration, judged by the same rule, never in place of the build's
        said = "不参与判定" if claim_id == "training-throughput" else "不替代本次构建的数，但按同样的要求"
        assert said in reason, (claim_id, reason)
    assert row.select_one(".claim-status").get_text(strip=True) != "成立（本次构建实测）"


def test_the_table_marks_latin_runs_as_english_and_escapes_the_rest():
    cells = bench.Table("结果 & 出处", ["项", "GRU（ms）"], [["CPU：Intel(R) Xeon(R)", "<1>"]])._repr_html_()
    assert '<span lang="en">GRU</span>（<span lang="en">ms</span>）' in cells
    assert '<span lang="en">Intel(R)</span>' in cells and "&amp;" in cells and "&lt;1&gt;" in cells


def test_a_commit_may_break_between_groups_of_six_and_a_number_never_does():
    cells = bench.Table("t", ["项", "本次构建"], [["提交", "c6541667a510（有未提交的改动）"],
                                                 ["斜率", "0.72、-0.44、-0.30"]])._repr_html_()
    assert '<span lang="en">c65416<wbr>67a510</span>' in cells
    assert "0.72、-0.44、-0.30" in cells
