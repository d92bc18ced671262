"""Every Numba module that inlines the engine kernels pins their current digest (see cogen.engine.pins)."""

from cogen.engine import pins


def test_every_engine_caller_pins_the_current_engine_kernels():
    assert not pins.stale_callers(), "engine kernels changed: run `python -m cogen.engine.pins`"


def test_every_module_that_imports_engine_kernels_is_pinned():
    from pathlib import Path

    package = Path(pins.__file__).resolve().parents[1]
    callers = {str(p.relative_to(package)) for p in package.rglob("*.py")
               if "from cogen.engine._kernels import" in p.read_text() and p.parent.name != "engine"}
    assert callers == set(pins.PINNED_CALLERS)
