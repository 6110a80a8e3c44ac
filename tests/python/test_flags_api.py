"""tide.set_flags / get_flag / get_flags take Fluid's and Paddle's spellings: FLAGS_<name> as
well as <name>; a non-dict to set_flags is a TypeError saying a dict is expected; unknown names
are a NotFoundError."""

import pytest

import tide


@pytest.fixture
def restore_check_nan_inf():
    before = tide.get_flag("check_nan_inf")
    yield
    tide.set_flags({"check_nan_inf": before})


def test_set_flags_takes_the_flags_prefix(restore_check_nan_inf):
    tide.set_flags({"FLAGS_check_nan_inf": True})
    assert tide.get_flag("check_nan_inf") == "true"
    tide.set_flags({"FLAGS_check_nan_inf": False})
    assert tide.get_flag("check_nan_inf") == "false"
    tide.set_flags({"check_nan_inf": True})  # the plain name as before
    assert tide.get_flag("FLAGS_check_nan_inf") == "true"


def test_set_flags_wants_a_dict():
    with pytest.raises(TypeError, match=r"set_flags: expected a dict.*got str"):
        tide.set_flags("check_nan_inf")
    with pytest.raises(TypeError, match=r"expected a dict.*got list"):
        tide.set_flags([("check_nan_inf", True)])


def test_unknown_flags_are_not_found_with_or_without_the_prefix():
    with pytest.raises(tide.NotFoundError, match="no flag named 'no_such_flag'"):
        tide.set_flags({"FLAGS_no_such_flag": 1})
    with pytest.raises(tide.NotFoundError, match="no flag named 'FLAGS_no_such_flag'"):
        tide.get_flags(["check_nan_inf", "FLAGS_no_such_flag"])
    with pytest.raises(tide.NotFoundError, match="no flag named 'no_such_flag'"):
        tide.get_flags("no_such_flag")


def test_get_flags_keys_are_the_names_as_given(restore_check_nan_inf):
    before = tide.get_flag("max_while_iterations")
    try:
        tide.set_flags({"check_nan_inf": True, "max_while_iterations": 123})
        assert tide.get_flags(["FLAGS_check_nan_inf", "max_while_iterations"]) == {
            "FLAGS_check_nan_inf": "true",
            "max_while_iterations": "123",
        }
        assert tide.get_flags("FLAGS_check_nan_inf") == {"FLAGS_check_nan_inf": "true"}
        # what it gives, set_flags takes back
        saved = tide.get_flags(("FLAGS_check_nan_inf",))
        tide.set_flags({"check_nan_inf": False})
        tide.set_flags(saved)
        assert tide.get_flag("check_nan_inf") == "true"
    finally:
        tide.set_flags({"max_while_iterations": before})
    with pytest.raises(TypeError, match="get_flags: expected a flag name or a list"):
        tide.get_flags(5)
    assert "get_flags" in tide.__all__
