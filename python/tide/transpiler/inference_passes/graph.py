"""Who reads and writes each variable of a program, and the edits the transformer passes make
with it: an op of block 0 replaced by a fused one, a value computed once into a new parameter."""

import numpy as np

from ... import unique_name


def other_operand(op, name):
    """An elementwise op's operand that is not `name` (X or Y: products and sums read either way
    round), or None unless exactly one of them is `name`."""
    xs, ys = op.input("X"), op.input("Y")
    if xs == [name] and ys != [name]:
        return ys[0]
    if ys == [name] and xs != [name]:
        return xs[0]
    return None


class Graph:
    """Readers and writers of each name (ops of sub-blocks count as both: opaque)."""

    def __init__(self, program, scope, place, keep=()):
        self.program, self.scope, self.place = program, scope, place
        self.block = program.global_block()
        self.keep = set(keep)
        self.readers, self.writers = {}, {}
        for n in keep:
            self.readers.setdefault(n, []).append("kept")  # read outside the program
        for b in range(program.num_blocks):
            for op in program.block(b).ops:
                for n in op.input_arg_names:
                    self.readers.setdefault(n, []).append(op)
                for n in op.output_arg_names:
                    self.writers.setdefault(n, []).append(op)
                    if b != 0:
                        self.readers.setdefault(n, []).append(op)

    def ops(self, op_type):
        return [op for op in self.block.ops if op.type == op_type]

    def only_reader(self, name):
        """The one op of block 0 reading `name` (once), or None."""
        r = self.readers.get(name, [])
        if len(r) != 1 or isinstance(r[0], str) or r[0].block.idx != 0:
            return None
        return r[0] if r[0].input_arg_names.count(name) == 1 else None

    def writer(self, name):
        """The one op writing `name`, or None (a feed, a parameter, several writers)."""
        w = self.writers.get(name, [])
        return w[0] if len(w) == 1 and w[0].block.idx == 0 else None

    def single_assignment(self, name):
        """At most one op writes `name`: it keeps one value through the program."""
        return len(self.writers.get(name, [])) <= 1

    def shape(self, name):
        return list(self.block.var(name).shape) if self.block.has_var(name) else None

    def persistable(self, name):
        return self.block.has_var(name) and self.block.var(name).persistable

    def value(self, name):
        """A persistable's value (numpy) from the scope, or None."""
        if not self.persistable(name):
            return None
        var = self.scope.find_var(name)
        if var is None or not var.is_initialized():
            return None
        t = var.get_tensor()
        # A copy: a view (numpy()) would mark the tensor as written unseen (content version 0),
        # and the oneDNN kernels would then reorder its weights again on every run.
        return np.array(t, copy=True) if t._is_initialized() else None

    def index(self, op):
        for i, o in enumerate(self.block.ops):
            if o is op:
                return i
        raise ValueError("op not in block 0")

    def writers_between(self, names, lo, hi):
        """True when an op of block 0 strictly between indices lo and hi writes one of names."""
        names = set(names)
        return any(names & set(op.output_arg_names) for op in self.block.ops[lo + 1 : hi])

    def _fresh(self, prefix):
        while True:
            name = unique_name.generate(prefix)
            if not self.block.has_var(name) and self.scope.find_var(name) is None:
                return name

    def new_temporary(self, prefix, like):
        """A new temporary variable of variable `like`'s dtype (its dims inferred later)."""
        name = self._fresh(prefix)
        self.block.create_var(name=name, dtype=self.block.var(like).dtype)
        return name

    def new_parameter(self, prefix, value, like):
        """A new persistable variable holding `value` (dtype of variable `like`)."""
        name = self._fresh(prefix)
        self.block.create_var(
            name=name, shape=list(value.shape), dtype=self.block.var(like).dtype, persistable=True
        )
        self.scope.var(name).get_tensor().set(np.ascontiguousarray(value), self.place, False)
        return name

    def replace(self, old_ops, op_type, inputs, outputs, attrs):
        """Removes old_ops and inserts the fused op where the last of them was. Refuses (False,
        nothing changed) when an op between the first and the last, not one of old_ops, writes
        one of the fused op's inputs or outputs (they would change meaning)."""
        idx = sorted(self.index(o) for o in old_ops)
        names = set(sum(inputs.values(), [])) | set(sum(outputs.values(), []))
        for i in range(idx[0], idx[-1] + 1):
            if i not in idx and names & set(self.block.ops[i].output_arg_names):
                return False
        for i in reversed(idx):
            self.block._remove_op(i)
        pos = idx[-1] - (len(idx) - 1)
        self.block._insert_op(pos, op_type, inputs=inputs, outputs=outputs, attrs=attrs)
        return True

    def intermediate(self, name, reader):
        """`name` is a temporary only `reader` reads (nothing fetches or keeps it)."""
        return (
            reader is not None
            and name not in self.keep
            and not self.persistable(name)
            and self.only_reader(name) is reader
            and self.single_assignment(name)
        )
