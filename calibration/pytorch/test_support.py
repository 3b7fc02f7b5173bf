"""Test support, no tests: a stand-in `torch` so that the calibration scripts' torch-free parts (argument parsers,
record writers' statistics, stage commands) import and run on a machine without PyTorch or a GPU.

  with stub_torch():
      import timing            # `import torch` at its top gets the stand-in
      ...

The stand-in module answers every attribute, call, index and operator with another stand-in (`Anything`), so module-
level code (`torch.bfloat16`, `class Block(nn.Module)`, `@torch.no_grad()`) runs; nothing it returns is a number. On
leaving, every module imported inside the block is dropped from sys.modules (they hold the stand-in) and sys.path and
sys.argv are restored.

parse_with_script(script, args) runs a script as __main__ under the stand-in up to its parse_args and gives the
Namespace its own parser made of `args` (flags spelled in full), or an AssertionError with argparse's message."""
import argparse
import contextlib
import importlib.abc
import importlib.util
import os
import runpy
import sys
import types

ROOTS = ("torch", "torchao", "pynvml")


class Anything:
    """Any torch object: every attribute, call, index and operator gives another; a decorator returns its function."""

    def __init__(self, name="torch"):
        object.__setattr__(self, "_name", name)

    def __getattr__(self, key):
        if key.startswith("__") and key.endswith("__"):
            raise AttributeError(key)
        return Anything(f"{self._name}.{key}")

    def __setattr__(self, key, value):
        pass

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], Anything):
            return args[0]  # @torch.no_grad, @torch.compile: the function itself
        return Anything(self._name + "()")

    def __mro_entries__(self, bases):
        return (Base,)  # class Block(nn.Module): a plain class

    def __getitem__(self, key):
        return Anything(self._name + "[]")

    def __iter__(self):
        return iter(())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __repr__(self):
        return f"<stub {self._name}>"

    def _op(self, *args):
        return Anything(self._name + "(op)")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _op
    __floordiv__ = __rfloordiv__ = __mod__ = __pow__ = __neg__ = __or__ = __ror__ = __and__ = __matmul__ = _op


class Base:
    """The base class a stand-in gives `class X(torch.nn.Module)` and the like."""

    def __init__(self, *args, **kwargs):
        pass

    def __init_subclass__(cls, **kwargs):
        pass

    def __getattr__(self, key):
        if key.startswith("__") and key.endswith("__"):
            raise AttributeError(key)
        return Anything(key)


class StubModule(types.ModuleType):
    def __getattr__(self, key):
        if key.startswith("__") and key.endswith("__"):
            raise AttributeError(key)
        return Anything(f"{self.__name__}.{key}")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ROOTS:
            return importlib.util.spec_from_loader(name, self, is_package=True)
        return None

    def create_module(self, spec):
        m = StubModule(spec.name)
        m.__version__ = "0.0+stub"
        return m

    def exec_module(self, module):
        pass


@contextlib.contextmanager
def stub_torch():
    saved_modules, saved_path, saved_argv = set(sys.modules), list(sys.path), list(sys.argv)
    for name in [n for n in sys.modules if n.split(".")[0] in ROOTS]:
        del sys.modules[name]  # a real torch imported earlier would shadow the stand-in
    finder = _Finder()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for name in set(sys.modules) - saved_modules:
            del sys.modules[name]
        sys.path[:], sys.argv[:] = saved_path, saved_argv


class Parsed(Exception):
    def __init__(self, ns):
        self.ns = ns


def parse_with_script(script, args):
    """The Namespace the script's own parser makes of `args` (the script run as __main__ under a stand-in torch up to
    its parse_args), or an AssertionError with argparse's message."""
    real = argparse.ArgumentParser.parse_args
    errors = []

    def stop(self, a=None, namespace=None):
        raise Parsed(real(self, a, namespace))

    def error(self, message):
        errors.append(message)
        raise SystemExit(2)

    real_init = argparse.ArgumentParser.__init__

    def whole_flags(self, *a, **kw):  # a stage's flag is spelled in full: --round is not --rounds
        kw["allow_abbrev"] = False
        real_init(self, *a, **kw)

    saved_error = argparse.ArgumentParser.error
    argparse.ArgumentParser.parse_args, argparse.ArgumentParser.error = stop, error
    argparse.ArgumentParser.__init__ = whole_flags
    try:
        with stub_torch():
            sys.argv = [script, *args]
            sys.path.insert(0, os.path.dirname(script))
            runpy.run_path(script, run_name="__main__")
    except Parsed as p:
        return p.ns
    except SystemExit as e:
        raise AssertionError(f"{os.path.basename(script)} {' '.join(args)}: {errors or e}")
    finally:
        argparse.ArgumentParser.parse_args, argparse.ArgumentParser.error = real, saved_error
        argparse.ArgumentParser.__init__ = real_init
    raise AssertionError(f"{script} ended without parsing its arguments")
