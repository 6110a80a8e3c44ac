"""tide.__all__ is the package's public face: the reference (docs/, scripts/docs.sh) has an entry
for each of its names, and `from tide import *` takes them. A public name added to tide without
a place in __all__ would have no entry."""

import inspect

import tide

# Modules the package imports for itself, not API (docs/_ext/tide_api.py: INTERNAL_MODULES).
INTERNAL = {"layer_helper", "layer_names"}


def test_every_name_in_all_exists():
    missing = [name for name in tide.__all__ if not hasattr(tide, name)]
    assert not missing, "tide.__all__ names what tide lacks: %s" % missing
    assert len(set(tide.__all__)) == len(tide.__all__), "tide.__all__ repeats a name"


def test_every_public_name_is_in_all():
    public = {
        name
        for name, obj in vars(tide).items()
        if not name.startswith("_") and not (inspect.ismodule(obj) and name in INTERNAL)
    }
    # tide.sdk, tide.testing and tide.utils are imported on first use, not by `import tide`.
    public -= {"sdk", "testing", "utils"}
    assert public - set(tide.__all__) == set(), (
        "public names of tide missing from tide.__all__ (add them, or start them with _)"
    )


def test_star_import_takes_all():
    namespace = {}
    exec("from tide import *", namespace)
    assert set(tide.__all__) <= set(namespace)
    assert "_C" not in namespace
