"""A run's identity is written and read in one place (arena/run_id.py); meta.json is written through its model."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from arena import catalog
from arena.evaluation import Cell
from arena.rundir import RunDir
from arena.run_id import AdapterLabel, ArenaLabel, RunId, cell_key
from arena.run_meta import SCHEMA_VERSION, RunMeta
from arena.stores import scoped, unscoped
from arena.streaming import is_streamed, plain_label, streamed_label


@pytest.mark.parametrize("text, name, release, streamed", [
    ("langgraph", "langgraph", "", False),
    ("langgraph@1.1.10", "langgraph", "1.1.10", False),
    ("langgraph (streamed)", "langgraph", "", True),
    ("langgraph@path:/src/lg", "langgraph", "path:/src/lg", False),
    ("openai_agents@git+https://github.com/o/r@main", "openai_agents", "git+https://github.com/o/r@main", False),
    ("tests.zoo:NeverPauses", "tests.zoo:NeverPauses", "", False),  # module:Class is a name
])
def test_an_adapter_label_reads_back_what_it_wrote(text, name, release, streamed):
    label = AdapterLabel.parse(text)
    assert (label.name, label.release, label.streamed) == (name, release, streamed)
    assert label.text == text and AdapterLabel(name, release, streamed) == label
    assert label.main == (not release and not streamed)


@pytest.mark.parametrize("text, name, store, upgrade", [
    ("durable_state", "durable_state", "sqlite", False),
    ("durable_state@postgres", "durable_state", "postgres", False),
    ("durable_state@redis", "durable_state", "redis", False),
    ("durable_state@upgrade", "durable_state", "sqlite", True),
])
def test_an_arena_label_reads_back_what_it_wrote(text, name, store, upgrade):
    label = ArenaLabel.parse(text)
    assert (label.name, label.store, label.upgrade) == (name, store, upgrade) and label.text == text
    assert label.scope == text.partition("@")[2]


def test_the_older_helpers_say_what_the_labels_say():
    assert streamed_label("langgraph@1.1.10") == "langgraph@1.1.10 (streamed)"
    assert plain_label("langgraph (streamed)") == "langgraph" and is_streamed("x (streamed)") and not is_streamed("x")
    assert scoped("d", "postgres") == "d@postgres" and scoped("d", "sqlite") == "d"
    assert unscoped("d@redis") == ("d", "redis") and unscoped("d@upgrade") == ("d@upgrade", "sqlite")


def test_a_cell_is_named_by_its_run_id():
    spec, target = catalog.load_arena("durable_state"), catalog.adapters()["vanilla"]
    assert Cell(spec, "scripted", "langgraph@1.1.10", target).key == "durable_state/langgraph@1.1.10/scripted"
    assert Cell(spec, "scripted", "vanilla", target, streamed=True).key == "durable_state/vanilla (streamed)/scripted"
    assert Cell(spec, "scripted", "vanilla", target, store="redis").key == "durable_state@redis/vanilla/scripted"
    upgrade = Cell(spec, "scripted", "langgraph", target, before=("langgraph@1.1.10", target))
    assert upgrade.key == "durable_state@upgrade/langgraph/scripted" == cell_key(*upgrade.run_id.labels, "scripted")
    assert RunId.parse("durable_state@upgrade", "langgraph (streamed)", "scripted").key == \
        "durable_state@upgrade/langgraph (streamed)/scripted"


def test_meta_json_is_headed_by_its_schema_version_and_read_back_by_its_model(tmp_path):
    run = RunDir(tmp_path, "durable_state@postgres", "langgraph@1.1.10", "scripted", {"items": ["a"], "epochs": 1})
    meta = json.loads((run.path / "meta.json").read_text())
    assert next(iter(meta)) == "schema_version" and meta["schema_version"] == SCHEMA_VERSION
    model = RunMeta.model_validate(meta)
    assert model.run_id == RunId.parse("durable_state@postgres", "langgraph@1.1.10", "scripted")
    assert model.run_id.arena.store == "postgres" and model.run_id.adapter.release == "1.1.10"


def test_a_key_meta_json_does_not_know_is_refused_when_written(tmp_path):
    with pytest.raises(ValidationError, match="framework_verison"):
        RunDir(tmp_path, "a", "b", "c", {"framework_verison": "1.0"})
    assert list(tmp_path.iterdir()) == []  # nothing written, not even a staged directory
    assert RunMeta.model_validate({"arena": "a", "adapter": "b", "model": "c"}).schema_version == 0  # older runs
