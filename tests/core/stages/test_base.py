from __future__ import annotations

import pytest
from curator import (
    CompositeStage,
    FunctionStage,
    Pipeline,
    ProcessingStage,
    Resources,
    Task,
    processing_stage,
)


class Upper(ProcessingStage):
    """Upper-cases text."""

    def process(self, task):
        return task.derive([s.upper() for s in task.data])


class Pair(CompositeStage):
    def decompose(self):
        return [Upper(), Upper().with_(name="Second")]


def test_defaults():
    s = Upper()
    assert s.name == "Upper"
    assert s.resources == Resources(cpus=1.0)
    assert s.batch_size == 1 and s.worker_mode == "thread" and s.num_workers() is None
    assert s.inputs() == ([], []) and s.outputs() == ([], [])
    assert not s.is_source
    assert s.modality == "any" and s.kind == "stage"


def test_explicit_name_is_kept_by_subclass():
    class Named(ProcessingStage):
        name = "custom"

        def process(self, task):
            return task

    assert Named().name == "custom"


def test_abstract_process_is_required():
    class NoProcess(ProcessingStage):
        pass

    with pytest.raises(TypeError):
        NoProcess()


def test_with_returns_modified_copy_and_leaves_original():
    s = Upper()
    c = s.with_(name="U2", resources=Resources(cpus=2), batch_size=4, num_workers=3,
                worker_mode="process")
    assert c is not s and isinstance(c, Upper)
    assert (c.name, c.resources.cpus, c.batch_size, c.num_workers(), c.worker_mode) == (
        "U2", 2, 4, 3, "process")
    assert (s.name, s.resources.cpus, s.batch_size, s.num_workers(), s.worker_mode) == (
        "Upper", 1.0, 1, None, "thread")
    assert s.with_(resources={"cpus": 0.5}).resources == Resources(cpus=0.5)


@pytest.mark.parametrize("kwargs, match", [
    ({"batch_size": 0}, "batch_size"),
    ({"worker_mode": "fiber"}, "worker_mode"),
    ({"resources": 3}, "Resources"),
])
def test_with_validates(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        Upper().with_(**kwargs)


def test_default_process_batch_flattens_and_drops_none():
    class Fan(ProcessingStage):
        def process(self, task):
            if task.data == 0:
                return None
            return [task.derive(i, suffix=i) for i in range(task.data)]

    out = Fan().process_batch([Task("a", "d", 0), Task("b", "d", 2), Task("c", "d", 1)])
    assert [t.task_id for t in out] == ["b_0", "b_1", "c_0"]


def test_reject_collects_records_with_source_and_error():
    s = Upper()
    t = Task("t", "d", ["x"], metadata={"source_files": ["f1", "f2"]})
    s.reject(t, "bad line", record={"line": 3}, error=ValueError("boom"))
    recs = s.drain_rejected()
    assert len(recs) == 1
    r = recs[0]
    assert (r.stage, r.reason, r.task_id, r.source, r.error, r.record) == (
        "Upper", "bad line", "t", "f1,f2", "ValueError: boom", {"line": 3})
    assert s.drain_rejected() == []


def test_processing_stage_decorator():
    @processing_stage(name="Shout", resources=Resources(cpus=0.5), batch_size=2,
                      outputs=(["data"], ["text"]))
    def shout(task):
        return task.derive(task.data + "!")

    assert isinstance(shout, FunctionStage) and isinstance(shout, ProcessingStage)
    assert shout.name == "Shout" and shout.resources.cpus == 0.5 and shout.batch_size == 2
    assert shout.outputs() == (["data"], ["text"])
    assert shout.process(Task("t", "d", "hi")).data == "hi!"

    @processing_stage
    def plain(task):
        return task

    assert plain.name == "plain"


def test_parameters_lists_constructor_arguments():
    class P(ProcessingStage):
        def __init__(self, a: int, b: str = "x") -> None:
            self.a, self.b = a, b

        def process(self, task):
            return task

    assert [p.name for p in P.parameters()] == ["a", "b"]


def test_composite_stage_is_expanded_by_build():
    p = Pipeline("p", stages=[Pair(), Upper().with_(name="Last")])
    built = p.build()
    assert [s.name for s in built] == ["Upper", "Second", "Last"]
    with pytest.raises(RuntimeError, match="composite"):
        Pair().process(Task("t", "d", []))
    result = p.run(initial_tasks=[Task("t", "d", ["a"])], summary=False)
    assert [t.data for t in result] == [["A"]]


def test_composite_declares_inner_io():
    class Reader(ProcessingStage):
        def inputs(self):
            return ["data"], ["path"]

        def outputs(self):
            return ["data"], ["text"]

        def process(self, task):
            return task

    class Tagger(ProcessingStage):
        def outputs(self):
            return ["data"], ["tag", "text"]

        def process(self, task):
            return task

    class Both(CompositeStage):
        def decompose(self):
            return [Reader(), Tagger()]

    assert Both().inputs() == (["data"], ["path"])
    assert Both().outputs() == (["data"], ["text", "tag"])


# ---- NeMo Curator's stage API ---------------------------------------------------------------

def test_with_num_workers_none_resets_an_override():
    class Fixed(ProcessingStage):
        def num_workers(self):
            return 4

        def process(self, task):
            return task

    s = Fixed().with_(num_workers=2)
    assert s.num_workers() == 2
    assert s.with_(name="x").num_workers() == 2  # left out: kept
    assert s.with_(num_workers=None).num_workers() is None  # None: the executor decides (NeMo)
    assert Fixed().with_(num_workers=None).num_workers() is None
    with pytest.raises(ValueError, match="num_workers"):
        s.with_(num_workers=0)


def test_nemo_num_workers_method_is_what_executors_read():
    from curator.stages.base import fixed_num_workers

    class NeMoStyle(ProcessingStage):
        def num_workers(self):  # NeMo Curator's way to fix a worker count
            return 3

        def process(self, task):
            return task

    s = NeMoStyle()
    assert fixed_num_workers(s) == 3  # what executors read
    assert fixed_num_workers(s.with_(num_workers=5)) == 5
    assert fixed_num_workers(s.with_(num_workers=None)) is None
    assert s.num_workers() == 3  # with_ returned copies
    with pytest.raises(TypeError, match="must not define 'num_workers' as a stage attribute"):
        class Attr(ProcessingStage):  # NeMo Curator refuses the attribute form too
            num_workers = 2

            def process(self, task):
                return task


def test_get_stage_class_finds_stages_by_class_name():
    from curator import get_stage_class
    from curator.stages.base import get_stage_class as from_base

    class MyMigratedStage(ProcessingStage):
        def process(self, task):
            return task

    assert get_stage_class("MyMigratedStage") is MyMigratedStage
    assert from_base is get_stage_class
    assert get_stage_class("Upper") is Upper
    with pytest.raises(KeyError, match="NoSuchStage"):
        get_stage_class("NoSuchStage")
    with pytest.raises(KeyError):
        get_stage_class("CompositeStage")  # abstract classes are not stages to build


def test_get_stage_class_knows_processing_stage_names():
    from curator import get_stage_class

    @processing_stage(name="shout_stage", batch_size=2)
    def shout(task):
        return task.derive([s.upper() for s in task.data])

    cls = get_stage_class("shout_stage")
    built = cls()
    assert built.name == "shout_stage" and built.batch_size == 2
    assert built.process(Task("t", "d", ["a"])).data == ["A"]


@pytest.mark.parametrize("fn", [
    lambda: None,
    lambda a, b: a,
    lambda task, *, flag: task,
    lambda task, flag=1: task,  # NeMo: exactly one parameter
    lambda **kw: kw,
    lambda *, task: task,
])
def test_processing_stage_rejects_wrong_signatures_at_decoration(fn):
    with pytest.raises(ValueError, match="exactly one positional argument"):
        processing_stage(name="bad")(fn)


def test_processing_stage_accepts_one_argument():
    assert processing_stage(name="ok1")(lambda task: task).name == "ok1"
    assert processing_stage(name="ok2")(lambda *tasks: tasks[0]).name == "ok2"
    stage = processing_stage(name="ok3", resources={"cpus": 0.5})(lambda task: task)
    assert stage.resources == Resources(cpus=0.5)  # NeMo accepts a dict of resources


# ---- NeMo Curator's current stage API --------------------------------------------------------

class Rows(Task):
    """A task type for input-spec dispatch."""


class ChildRows(Rows):
    """A more specific one."""


class PerType(ProcessingStage):
    def inputs(self):
        return {Rows: (["data"], ["text"]), ChildRows: (["data"], ["title"])}

    def process(self, task):
        return task


def test_dict_input_specs_pick_the_most_specific_task_type():
    import pyarrow as pa

    s = PerType()
    assert s.input_spec_for_task(Rows("r", "d", pa.table({"text": ["x"]}))) == (["data"], ["text"])
    assert s.input_spec_for_task(ChildRows("c", "d", None)) == (["data"], ["title"])
    assert s.validate_input(Rows("r", "d", pa.table({"text": ["x"]})))
    assert not s.validate_input(ChildRows("c", "d", pa.table({"text": ["x"]})))  # needs title
    with pytest.raises(TypeError, match="does not support input task type Task"):
        s.input_spec_for_task(Task("t", "d", None))
    assert not s.validate_input(Task("t", "d", None))
    with pytest.raises(ValueError, match="failed validation"):  # the default process_batch
        s.process_batch([ChildRows("c", "d", pa.table({"text": ["x"]}))])
    assert s.process_batch([Rows("r", "d", pa.table({"text": ["x"]}))])[0].task_id == "r"


def test_malformed_input_specs_are_a_type_error():
    class Bad(Upper):
        def inputs(self):
            return (["data"],)

    with pytest.raises(TypeError, match=r"inputs\(\) must be a tuple"):
        Bad().input_spec_for_task(Task("t", "d", None))
    assert Bad().validate_input(Task("t", "d", None)) is False


@pytest.mark.parametrize("attr", ["name", "resources", "batch_size"])
def test_a_property_where_with_needs_an_attribute_is_a_type_error(attr):
    with pytest.raises(TypeError, match=f"must not define '{attr}' as a @property"):
        type("P", (Upper,), {attr: property(lambda self: None)})
    with pytest.raises(TypeError, match=f"must not override '_{attr}'"):
        type("Q", (Upper,), {f"_{attr}": lambda self: None})


def test_fanout_detection_from_the_process_annotation():
    class Many(ProcessingStage):
        def process(self, task: Task) -> list[Task]:
            return [task]

    class Maybe(ProcessingStage):
        def process(self, task: Task) -> Task | list[Task]:
            return task

    class One(ProcessingStage):
        def process(self, task: Task) -> Task:
            return task

    assert Many().is_fanout_stage() and Maybe().is_fanout_stage() and not One().is_fanout_stage()
    assert One().ray_stage_spec() == {"is_fanout_stage": False}


def test_with_merges_backend_specs_and_sets_runtime_env():
    s = Upper()
    t = s.with_(ray_stage_spec={"is_actor_stage": True}, xenna_stage_spec={"slots": 2},
                runtime_env={"env_vars": {"A": "1"}})
    assert t.ray_stage_spec() == {"is_fanout_stage": False, "is_actor_stage": True}
    assert t.xenna_stage_spec() == {"slots": 2} and s.xenna_stage_spec() == {}
    assert t.runtime_env == {"env_vars": {"A": "1"}} and s.runtime_env is None
    u = t.with_(ray_stage_spec={"x": 1})  # later overrides merge over earlier ones
    assert u.ray_stage_spec() == {"is_fanout_stage": False, "is_actor_stage": True, "x": 1}
    with pytest.raises(ValueError, match=r"with_\(num_workers="):
        s.with_(xenna_stage_spec={"num_workers": 2})


def test_composite_with_changes_named_sub_stages_when_decomposed():
    from curator import Pipeline

    pair = Pair()
    assert pair.with_({"Upper": {"resources": Resources(cpus=3), "batch_size": 5}}) is pair
    pair.with_({"Second": {"name": "Renamed"}})
    built = Pipeline("p", stages=[pair]).build()
    assert [(s.name, s.resources.cpus, s.batch_size) for s in built] == [
        ("Upper", 3, 5), ("Renamed", 1.0, 1)]
    with pytest.raises(ValueError, match="Stage Nope not found in composite stage"):
        Pair().with_({"Nope": {"batch_size": 2}}).decompose_and_apply_with()
    renamed = Pair().with_(name="P2")  # keyword arguments change the composite itself
    assert renamed.name == "P2" and isinstance(renamed, Pair)
