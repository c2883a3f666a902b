"""Constructor parameter types, checked and converted in one place for specs and for Python.

:func:`check_parameter_types` validates values against a constructor's annotations with
pydantic in lax mode (the string ``"50"`` becomes ``50`` for an ``int``; ``"eighty"`` is a
:class:`ParameterTypeError`, a :class:`ConfigError` and a ``TypeError``, naming the class, the
parameter, the expected type and the value). The spec
loader calls it before it builds a component; :func:`typed_init` wraps a class's ``__init__`` so
that constructing it in Python converts and checks exactly the same way. Registered classes are
wrapped when they are registered, and the base classes (stages, executors, workflows, filter
and modifier objects, downloaders and extractors) set ``__new__ = typed_new`` so that every
subclass is wrapped on its first construction, whether or not a registry was built.

Unannotated parameters, ``Any``, annotations marked :func:`validated_later` and annotations
pydantic cannot build a validator for (loose callables, forward references that do not
resolve) are not checked; a value that *is* the parameter's default is passed through
(``text_field: str = None`` keeps working). Only scalars are replaced by their converted value;
other values are checked and passed on as given.
"""

from __future__ import annotations

import functools
import inspect
import sys
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from curator.errors import ConfigError

__all__ = ["check_parameter_types", "check_values", "typed_init", "typed_new", "init_signature",
           "parameter_error", "ParameterTypeError", "validated_later"]

class ParameterTypeError(ConfigError, TypeError):
    """A parameter value that cannot be converted to its annotated type: a configuration error
    (specs, the CLI's exit status 2) and a ``TypeError`` (Python's convention)."""


_VALIDATED_LATER: list[Any] = []


def validated_later(annotation: Any) -> Any:
    """Leave parameters annotated exactly ``annotation`` unchecked, because the class checks
    such values itself when it uses them, with its own errors (a stage's input specs: NeMo
    Curator reports a malformed one when a task is validated, not when the stage is built).
    Returns ``annotation``, so it can wrap a type alias's definition."""
    _VALIDATED_LATER.append(annotation)
    return annotation


_SCALARS = (str, int, float, bool)
_EXACT = frozenset({str, int, float, bool})


_BUILTIN_MODULES = frozenset({"builtins", "typing", "collections.abc", "abc", "collections"})


@dataclass(frozen=True)
class _AsIs:
    """The values that pass an annotation's check unchanged without pydantic (so without
    building a validator or importing pydantic): pydantic's lax (smart) union mode returns each
    of these as it is, and only scalars are ever replaced by their converted value."""

    exact: frozenset  # plain scalar types (and NoneType): a value of exactly that type
    classes: tuple  # library classes: a non-scalar instance (pydantic checks isinstance only)
    lists: frozenset  # list[T] for a plain scalar T: a list of exactly-T items
    dicts: frozenset  # dict[str, T] for a plain scalar T or Any: str keys, exactly-T values

    def __call__(self, value: Any) -> bool:
        kind = type(value)
        if kind in self.exact:
            return True
        if kind is list and self.lists:
            return any(all(type(x) is t for x in value) for t in self.lists)
        if kind is dict and self.dicts:
            return all(type(k) is str for k in value) and any(
                t is Any or all(type(v) is t for v in value.values()) for t in self.dicts)
        return bool(self.classes) and not isinstance(value, _SCALARS) and isinstance(
            value, self.classes)


def _as_is(annotation: Any) -> _AsIs:
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    exact, classes, lists, dicts = set(), [], set(), set()
    for member in typing.get_args(annotation) if union else (annotation,):
        origin, args = typing.get_origin(member), typing.get_args(member)
        if member in _EXACT or member is type(None):
            exact.add(member)
        elif origin is list and len(args) == 1 and args[0] in _EXACT:
            lists.add(args[0])
        elif origin is dict and len(args) == 2 and args[0] is str and (
                args[1] in _EXACT or args[1] is Any):
            dicts.add(args[1])
        elif (origin is None and isinstance(member, type)
              and member.__module__ not in _BUILTIN_MODULES
              and not issubclass(member, (*_SCALARS, tuple))):
            classes.append(member)  # not a NamedTuple: pydantic re-validates those
    return _AsIs(frozenset(exact), tuple(classes), frozenset(lists), frozenset(dicts))


def check_parameter_types(cls: Any, params: dict[str, Any], label: str) -> dict[str, Any]:
    """Validate ``params`` against the annotations of ``cls``'s constructor (pydantic, lax
    mode). Returns the parameters, scalars converted to their annotated type; raises
    :class:`ConfigError` ``"{label}: parameter 'p' expects T, got V (type): reason"``.
    Parameters a constructor passes on to its base class (``**kwargs``) are checked against
    the base class's annotations."""
    checks = _class_checks(cls)
    checked = dict(params)
    for pname, value in params.items():
        check = checks.get(pname)
        if check is not None:
            checked[pname] = check.convert(value, label, pname)
    return checked


def check_values(label: str, values: dict[str, Any],
                 annotations: dict[str, Any]) -> dict[str, Any]:
    """:func:`check_parameter_types` for options given as a dict (an executor's ``config``):
    each value whose key has an annotation is converted and checked the same way."""
    checked = dict(values)
    for key, value in values.items():
        if key not in annotations:
            continue
        annotation = annotations[key]
        adapter = _adapter(annotation)
        if adapter is not None:
            checked[key] = _Check(annotation, adapter, _NO_DEFAULT,
                                  _as_is(annotation)).convert(value, label, key)
    return checked


_NO_DEFAULT = object()


def parameter_error(label: str, pname: str, annotation: Any, value: Any, reason: str) -> str:
    """The one wording of a parameter type error (specs and constructors share it)."""
    return (f"{label}: parameter {pname!r} expects {_type_name(annotation)}, got {value!r} "
            f"({type(value).__name__}){': ' + reason if reason else ''}")


def typed_init(cls: type) -> type:
    """Make ``cls(...)`` convert and check its parameters as :func:`check_parameter_types`
    does (idempotent; the validators are built on the first construction and cached). The
    constructors of its base classes are wrapped too, so parameters a subclass passes on
    (``super().__init__(**kwargs)``) are checked as well."""
    for klass in cls.__mro__:
        if klass is not cls and "__init__" in klass.__dict__ and \
                klass.__module__ not in ("builtins", "abc", "typing"):
            _wrap(klass, klass.__dict__["__init__"])
    _wrap(cls, cls.__init__)
    return cls


def typed_new(cls: type, *args: Any, **kwargs: Any) -> Any:
    """A base class's ``__new__ = typed_new``: the first construction of each subclass wraps
    its ``__init__`` with :func:`typed_init` (after ``@dataclass`` has written it, which
    ``__init_subclass__`` runs too early to see); later constructions pay one dict lookup."""
    if "_curator_typed" not in cls.__dict__:
        typed_init(cls)
        cls._curator_typed = True  # type: ignore[attr-defined]
    return object.__new__(cls)


class _InitSignature:
    """``inspect.signature(cls)`` for classes whose base sets ``__new__ = typed_new``: their
    ``__init__``'s, as before (inspect would otherwise show ``typed_new``'s
    ``(*args, **kwargs)``). Set ``__signature__ = init_signature`` beside ``__new__``."""

    def __get__(self, instance: Any, owner: type) -> inspect.Signature | None:
        if instance is not None:
            return None
        init = owner.__init__
        if init is object.__init__:
            return inspect.Signature()
        try:
            sig = inspect.signature(init)  # follows the typed wrapper's __wrapped__
        except (TypeError, ValueError):
            return None
        return sig.replace(parameters=list(sig.parameters.values())[1:])


init_signature = _InitSignature()


def _wrap(cls: type, init: Any) -> None:
    if not inspect.isfunction(init) or getattr(init, "__curator_typed__", False):
        return

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        _typed_call(init, self, args, kwargs)

    __init__.__curator_typed__ = True  # type: ignore[attr-defined]
    cls.__init__ = __init__  # type: ignore[misc]


def _typed_call(init: Callable[..., None], self: Any, args: tuple, kwargs: dict) -> None:
    plan = _PLANS.get(init)
    if plan is None:
        plan = _cached_plan(init, type(self))
    if plan.checks and (args or kwargs):
        label = type(self).__name__
        if args:
            args = tuple(plan.convert_positional(i, v, label) for i, v in enumerate(args))
        if kwargs:
            kwargs = {k: plan.convert_named(k, v, label) for k, v in kwargs.items()}
    init(self, *args, **kwargs)


_UNBUILT = object()


@dataclass
class _Check:
    annotation: Any
    adapter: Any  # the pydantic validator, or _UNBUILT until a value first needs it
    default: Any
    as_is: _AsIs  # the values that pass at once

    def convert(self, value: Any, label: str, pname: str) -> Any:
        if value is self.default or self.as_is(value):
            return value
        if self.adapter is _UNBUILT:
            self.adapter = _adapter(self.annotation)
        if self.adapter is None:  # no validator can be built: unchecked
            return value
        import pydantic

        try:
            result = self.adapter.validate_python(value)
        except pydantic.ValidationError as exc:
            errors = exc.errors()
            reason = errors[0].get("msg", "") if errors else ""
            raise ParameterTypeError(parameter_error(label, pname, self.annotation, value,
                                                     reason)) from None
        if isinstance(value, _SCALARS) and type(result) in _SCALARS:
            return result  # "50" -> 50 for an int; 3 -> 3.0 for a float
        return value


@dataclass
class _Plan:
    checks: dict[str, _Check] = field(default_factory=dict)
    positional: list[str] = field(default_factory=list)

    def convert_positional(self, i: int, value: Any, label: str) -> Any:
        if i >= len(self.positional):
            return value
        return self.convert_named(self.positional[i], value, label)

    def convert_named(self, name: str, value: Any, label: str) -> Any:
        check = self.checks.get(name)
        return value if check is None else check.convert(value, label, name)


_PLANS: dict[Callable[..., Any], _Plan] = {}


def _cached_plan(init: Any, owner: Any) -> _Plan:
    try:
        plan = _PLANS.get(init)
    except TypeError:  # unhashable callable
        return _plan_for(init, owner)
    if plan is None:
        plan = _PLANS[init] = _plan_for(init, owner)
    return plan


def _class_checks(cls: Any) -> dict[str, _Check]:
    """The checks of ``cls``'s constructor and, for what it does not name itself, of its base
    classes' constructors (a subclass's own annotation wins)."""
    if not inspect.isclass(cls):
        return _cached_plan(_constructor(cls), cls).checks
    checks: dict[str, _Check] = {}
    for klass in reversed(cls.__mro__):
        if "__init__" in klass.__dict__ and inspect.isfunction(klass.__dict__["__init__"]):
            checks.update(_cached_plan(inspect.unwrap(klass.__dict__["__init__"]), klass).checks)
    return checks


def _constructor(cls: Any) -> Any:
    target = cls.__init__ if inspect.isclass(cls) else cls
    return inspect.unwrap(target)


def _plan_for(init: Any, owner: Any) -> _Plan:
    try:
        sig = inspect.signature(init)
    except (TypeError, ValueError):
        return _Plan()
    params = list(sig.parameters.values())
    if inspect.isclass(owner) and params and params[0].name == "self":
        params = params[1:]
    hints = _type_hints(init, owner)
    plan = _Plan(positional=[p.name for p in params
                             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)])
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name not in hints:
            continue
        annotation = hints[p.name]
        if _unchecked(annotation):
            continue
        # the validator is built when a value first needs it (most values are plain scalars)
        plan.checks[p.name] = _Check(annotation, _UNBUILT, p.default, _as_is(annotation))
    return plan


def _type_hints(target: Any, owner: Any) -> dict[str, Any]:
    """The constructor's resolved annotations; one that cannot be resolved is left out."""
    try:
        return typing.get_type_hints(target)
    except Exception:
        pass
    globalns = getattr(target, "__globals__", None) or vars(
        sys.modules.get(getattr(owner, "__module__", ""), typing))
    hints = {}
    for name, annotation in getattr(target, "__annotations__", {}).items():
        holder = types.SimpleNamespace(__annotations__={name: annotation})
        try:
            hints[name] = typing.get_type_hints(holder, globalns=globalns)[name]
        except Exception:
            continue
    return hints


@functools.lru_cache(maxsize=1024)
def _cached_adapter(annotation: Any) -> Any:
    import pydantic

    config = pydantic.ConfigDict(arbitrary_types_allowed=True, coerce_numbers_to_str=True)
    for kwargs in ({"config": config}, {}):  # types with their own config refuse ``config``
        try:
            return pydantic.TypeAdapter(annotation, **kwargs)
        except Exception:
            continue
    return None


def _unchecked(annotation: Any) -> bool:
    return annotation is Any or annotation is inspect.Parameter.empty or any(
        annotation == later for later in _VALIDATED_LATER)


def _adapter(annotation: Any) -> Any:
    if _unchecked(annotation):
        return None
    try:
        return _cached_adapter(annotation)
    except TypeError:  # unhashable annotation
        return _cached_adapter.__wrapped__(annotation)


def _type_name(annotation: Any) -> str:
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")
