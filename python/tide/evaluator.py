"""Fluid's fluid.evaluator: metrics accumulated by the program itself over many runs (a pass)::

    acc = tide.evaluator.Accuracy(input=predict, label=label)
    for pass_id in range(passes):
        acc.reset(exe)
        for data in reader():
            loss, batch_acc = exe.run(main, feed=..., fetch_list=[avg_cost] + acc.metrics)
        pass_acc = acc.eval(exe)

Each evaluator adds ops to the main program that add a batch's counts to persistable state
variables (initialised to zero by the startup program); `metrics` are the batch's own values,
`reset(exe)` zeroes the state, `eval(exe)` computes the pass's metric from it. Fluid 1.x's API and
semantics; tide.metrics holds the numpy-side accumulators Fluid recommends instead.
"""

import numpy as np

from . import layers, unique_name
from .framework import Program, program_guard
from .layer_helper import LayerHelper

__all__ = ["Evaluator", "Accuracy", "ChunkEvaluator", "EditDistance"]


def _clone_var_(block, var):
    """`var` declared in another program's block (same name, so the same scope entry)."""
    return block.create_var(
        name=var.name,
        shape=var.shape,
        dtype=var.dtype,
        type=var.type,
        lod_level=var.lod_level,
        persistable=True,
    )


class Evaluator:
    """The base: `states` (persistable accumulators) and `metrics` (this batch's values)."""

    def __init__(self, name, **kwargs):
        self.states = []
        self.metrics = []
        self.helper = LayerHelper(name, **kwargs)
        if self.helper.main_program.current_block().idx != 0:
            raise ValueError(
                "%s: an evaluator is built in the program's global block, not "
                "inside a control-flow block" % type(self).__name__
            )

    def reset(self, executor, reset_program=None):
        """Zeroes the states (run by `executor` in its scope: the global scope)."""
        if reset_program is None:
            reset_program = Program()
        with program_guard(main_program=reset_program):
            for var in self.states:
                g_var = _clone_var_(reset_program.current_block(), var)
                layers.fill_constant(shape=g_var.shape, value=0.0, dtype=g_var.dtype, out=g_var)
        executor.run(reset_program)

    def eval(self, executor, eval_program=None):
        """The metric over every batch since the last reset."""
        raise NotImplementedError()

    def _create_state(self, suffix, dtype, shape):
        state = layers.create_global_var(
            shape=shape,
            value=0,
            dtype=dtype,
            persistable=True,
            name="_".join([unique_name.generate(self.helper.name), suffix]),
        )
        self.states.append(state)
        return state

    def _fetch_states(self, executor, eval_program):
        """The states' values, fetched by a program of their own."""
        if eval_program is None:
            eval_program = Program()
        block = eval_program.current_block()
        return executor.run(eval_program, fetch_list=[_clone_var_(block, s) for s in self.states])


class Accuracy(Evaluator):
    """Top-k accuracy over the pass: the batch's accuracy in `metrics`, the pass's from eval()
    (the correct count over the total, summed over the batches)."""

    def __init__(self, input, label, k=1, **kwargs):
        super().__init__("accuracy", **kwargs)
        self.total = self._create_state(dtype="int64", shape=[1], suffix="total")
        self.correct = self._create_state(dtype="int64", shape=[1], suffix="correct")
        total = self.helper.create_variable_for_type_inference(dtype="int32", stop_gradient=True)
        correct = self.helper.create_variable_for_type_inference(dtype="int32", stop_gradient=True)
        acc = layers.accuracy(input=input, label=label, k=k, total=total, correct=correct)
        layers.sums(input=[self.total, layers.cast(total, "int64")], out=self.total)
        layers.sums(input=[self.correct, layers.cast(correct, "int64")], out=self.correct)
        self.metrics.append(acc)

    def eval(self, executor, eval_program=None):
        total, correct = self._fetch_states(executor, eval_program)
        total, correct = float(total[0]), float(correct[0])
        if total == 0:
            raise ValueError("Accuracy.eval: no batch ran since the last reset (the total is 0)")
        return np.array([correct / total], dtype="float32")


class ChunkEvaluator(Evaluator):
    """Chunk precision, recall and F1 over the pass (layers.chunk_eval's counts summed): the
    batch's (precision, recall, f1) in `metrics`."""

    def __init__(self, input, label, chunk_scheme, num_chunk_types, excluded_chunk_types=None):
        super().__init__("chunk_eval")
        self.num_infer_chunks, self.num_label_chunks, self.num_correct_chunks = (
            self._create_state(dtype="int64", shape=[1], suffix=suffix)
            for suffix in ("num_infer_chunks", "num_label_chunks", "num_correct_chunks")
        )
        precision, recall, f1_score, num_infer, num_label, num_correct = layers.chunk_eval(
            input=input,
            label=label,
            chunk_scheme=chunk_scheme,
            num_chunk_types=num_chunk_types,
            excluded_chunk_types=excluded_chunk_types,
        )
        layers.sums(input=[self.num_infer_chunks, num_infer], out=self.num_infer_chunks)
        layers.sums(input=[self.num_label_chunks, num_label], out=self.num_label_chunks)
        layers.sums(input=[self.num_correct_chunks, num_correct], out=self.num_correct_chunks)
        self.metrics.extend([precision, recall, f1_score])

    def eval(self, executor, eval_program=None):
        num_infer, num_label, num_correct = (
            float(v[0]) for v in self._fetch_states(executor, eval_program)
        )
        precision = num_correct / num_infer if num_infer else 0.0
        recall = num_correct / num_label if num_label else 0.0
        f1 = 2 * precision * recall / (precision + recall) if num_correct else 0.0
        return (
            np.array([precision], dtype="float32"),
            np.array([recall], dtype="float32"),
            np.array([f1], dtype="float32"),
        )


class EditDistance(Evaluator):
    """Edit distance over the pass: eval() returns (the average distance per sequence, the share
    of sequences with a non-zero distance); `metrics` are the batch's (total distance, number of
    sequences in error)."""

    def __init__(self, input, label, ignored_tokens=None, **kwargs):
        super().__init__("edit_distance", **kwargs)
        self.total_distance = self._create_state(
            dtype="float32", shape=[1], suffix="total_distance"
        )
        self.seq_num = self._create_state(dtype="int64", shape=[1], suffix="seq_num")
        self.instance_error = self._create_state(dtype="int64", shape=[1], suffix="instance_error")
        distances, seq_num = layers.edit_distance(
            input=input, label=label, ignored_tokens=ignored_tokens
        )
        zero = layers.fill_constant(shape=[1], value=0.0, dtype="float32")
        right = layers.cast(x=layers.equal(distances, zero), dtype="int64")
        instance_error_count = layers.elementwise_sub(x=seq_num, y=layers.reduce_sum(right))
        total_distance = layers.reduce_sum(distances)
        layers.sums(input=[self.total_distance, total_distance], out=self.total_distance)
        layers.sums(input=[self.seq_num, seq_num], out=self.seq_num)
        layers.sums(input=[self.instance_error, instance_error_count], out=self.instance_error)
        self.metrics.append(total_distance)
        self.metrics.append(instance_error_count)

    def eval(self, executor, eval_program=None):
        total_distance, seq_num, instance_error = (
            float(v[0]) for v in self._fetch_states(executor, eval_program)
        )
        if seq_num == 0:
            raise ValueError("EditDistance.eval: no sequence ran since the last reset")
        return (
            np.array([total_distance / seq_num], dtype="float32"),
            np.array([instance_error / seq_num], dtype="float32"),
        )
