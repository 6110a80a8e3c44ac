"""Testing tools installed with Tide: OpTest (op_test.py), the base class of the op tests, and
the device conformance kit (conformance.py, the `tide-conformance` command) that runs those
tests on a device plugin's place, after checking its device contract (device_contracts.py). The op test modules themselves are installed in cases/."""
