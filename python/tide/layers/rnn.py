"""Recurrent networks over sequences, with Fluid 1.x's names and behaviour: DynamicRNN (LoD
sequences of different lengths, on While and the ops_control DynamicRNN ops), StaticRNN
(time-major tensors, Fluid's `recurrent` op), the ops they are made of, and beam search
(beam_search, beam_search_decode) for decoders written as a While loop."""

import contextlib

from .. import unique_name
from ..core import convert_dtype, dtype_code
from ..framework import Variable
from ..layer_helper import LayerHelper
from .checks import check_var
from .control_flow import BlockGuard, While, array_read, array_write
from .logic import increment, less_than
from .nn import assign, fill_constant

__all__ = [
    "DynamicRNN",
    "StaticRNN",
    "lod_rank_table",
    "max_sequence_len",
    "lod_tensor_to_array",
    "array_to_lod_tensor",
    "shrink_memory",
    "reorder_lod_tensor_by_rank",
    "beam_search",
    "beam_search_decode",
]


def _new(block, prefix, **kwargs):
    return block.create_var(name=unique_name.generate(prefix), **kwargs)


# -- the ops --------------------------------------------------------------------------------------
def _declared_in(block, name):
    """Whether `name` is declared in `block` or one of its ancestors."""
    program = block.program
    while True:
        if name in block.vars:
            return True
        if block.parent_idx < 0:
            return False
        block = program.block(block.parent_idx)


def lod_rank_table(x, level=0):
    """The sequences of x's LoD level `level`, sorted by length (longest first)."""
    check_var("lod_rank_table", "x", x)
    helper = LayerHelper("lod_rank_table")
    table = _new(
        helper.main_program.current_block(),
        "lod_rank_table",
        type="LOD_RANK_TABLE",
        stop_gradient=True,
    )
    helper.append_op(
        "lod_rank_table", inputs={"X": x}, outputs={"Out": table}, attrs={"level": int(level)}
    )
    return table


def max_sequence_len(rank_table):
    """The length of the longest sequence of the rank table (int64 [1])."""
    helper = LayerHelper("max_sequence_len")
    out = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    helper.append_op("max_sequence_len", inputs={"RankTable": rank_table}, outputs={"Out": out})
    return out


def lod_tensor_to_array(x, table):
    """A tensor array with one element per time step: element t holds the t-th part of each
    sequence longer than t, in the table's order."""
    check_var("lod_tensor_to_array", "x", x)
    helper = LayerHelper("lod_tensor_to_array")
    array = _new(
        helper.main_program.current_block(),
        "lod_tensor_to_array",
        type="LOD_TENSOR_ARRAY",
        dtype=x.dtype,
    )
    helper.append_op(
        "lod_tensor_to_array", inputs={"X": x, "RankTable": table}, outputs={"Out": array}
    )
    return array


def array_to_lod_tensor(x, table):
    """The inverse of lod_tensor_to_array: the steps of array x back into sequences."""
    helper = LayerHelper("array_to_lod_tensor")
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op(
        "array_to_lod_tensor", inputs={"X": x, "RankTable": table}, outputs={"Out": out}
    )
    out.desc.lod_level = 1
    return out


def shrink_memory(x, i, table):
    """x's first rows (sequences): those of the sequences longer than step i."""
    check_var("shrink_memory", "x", x)
    helper = LayerHelper("shrink_memory")
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op(
        "shrink_rnn_memory", inputs={"X": x, "I": i, "RankTable": table}, outputs={"Out": out}
    )
    return out


def reorder_lod_tensor_by_rank(x, rank_table):
    """x's sequences (its rows when it has no LoD) in the rank table's order."""
    check_var("reorder_lod_tensor_by_rank", "x", x)
    helper = LayerHelper("reorder_lod_tensor_by_rank")
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op(
        "reorder_lod_tensor_by_rank", inputs={"X": x, "RankTable": rank_table}, outputs={"Out": out}
    )
    return out


# -- DynamicRNN -----------------------------------------------------------------------------------
class DynamicRNN:
    """An RNN over a batch of LoD sequences of different lengths (Fluid's DynamicRNN). The block
    runs once per time step over the sequences still running, longest first, so each step's
    batch shrinks as sequences end; outputs come back as LoD sequences in the input's order::

        drnn = layers.DynamicRNN()
        with drnn.block():
            word = drnn.step_input(sentence)          # [running, D]: this step's rows
            prev = drnn.memory(shape=[H], value=0.0)  # or memory(init=h0, need_reorder=True)
            h = layers.fc(input=[word, prev], size=H, act="tanh")
            drnn.update_memory(prev, h)
            drnn.output(h)
        hidden = drnn()                               # LoD sequences, one row per input row

    It is built on While: the input is split by time step (lod_rank_table, lod_tensor_to_array),
    a memory is a variable carried from one iteration to the next and cut to the running
    sequences (shrink_rnn_memory), and the outputs are put back together (array_to_lod_tensor).
    Gradients flow through it (append_backward, optimizer.minimize)."""

    BEFORE_RNN, IN_RNN, AFTER_RNN = range(3)

    def __init__(self, name=None):
        self.helper = LayerHelper("dynamic_rnn", name=name)
        self.status = DynamicRNN.BEFORE_RNN
        self.lod_rank_table = None
        self.max_seq_len = None
        self.step_idx = None
        self.zero_idx = None
        self.input_array = []  # (array, dtype, x, level) per step_input
        self.input_lod_level = 1
        self.mem_dict = {}  # the name memory() returned -> the variable carried across steps
        self.mem_link = []  # (new value, carried variable)
        self.output_array = []
        self.outputs = []
        self.cond = _new(
            self.helper.main_program.current_block(),
            self.helper.name + ".cond",
            dtype="bool",
            shape=[1],
            stop_gradient=True,
        )

    def _parent_block(self):
        program = self.helper.main_program
        return program.block(program.current_block().parent_idx)

    def _assert_in_rnn_block(self, method):
        if self.status != DynamicRNN.IN_RNN:
            raise ValueError(
                "DynamicRNN.%s() can only be called inside 'with rnn.block():'" % method
            )

    @contextlib.contextmanager
    def block(self):
        """The step block: `with rnn.block(): ...`; entered once."""
        if self.status != DynamicRNN.BEFORE_RNN:
            raise ValueError("DynamicRNN.block() can be entered only once")
        self.step_idx = fill_constant([1], "int64", 0, force_cpu=True)
        self.status = DynamicRNN.IN_RNN
        loop = While(self.cond)
        with loop.block():
            yield
            if self.lod_rank_table is None:
                raise ValueError("DynamicRNN: the block must call step_input() at least once")
            for new_mem, mem in self.mem_link:
                assign(new_mem, mem)
            increment(self.step_idx, 1.0, in_place=True)
            less_than(self.step_idx, self.max_seq_len, force_cpu=True, cond=self.cond)
        self.status = DynamicRNN.AFTER_RNN
        for array in self.output_array:
            out = array_to_lod_tensor(array, self.lod_rank_table)
            out.desc.lod_level = self.input_lod_level
            self.outputs.append(out)

    def step_input(self, x, level=0):
        """This step's part of each running sequence of x (its rows at LoD level `level`)."""
        self._assert_in_rnn_block("step_input")
        check_var("DynamicRNN.step_input", "x", x)
        parent = self._parent_block()
        if self.lod_rank_table is None:
            self.input_lod_level = max(1, x.lod_level)
            self.lod_rank_table = _new(
                parent, "lod_rank_table", type="LOD_RANK_TABLE", stop_gradient=True
            )
            parent.append_op(
                "lod_rank_table",
                inputs={"X": x},
                outputs={"Out": self.lod_rank_table},
                attrs={"level": int(level)},
            )
            self.max_seq_len = _new(
                parent, "dynamic_rnn_max_seq_len", dtype="int64", shape=[1], stop_gradient=True
            )
            parent.append_op(
                "max_sequence_len",
                inputs={"RankTable": self.lod_rank_table},
                outputs={"Out": self.max_seq_len},
            )
            parent.append_op(
                "less_than",
                inputs={"X": self.step_idx, "Y": self.max_seq_len},
                outputs={"Out": self.cond},
                attrs={"force_cpu": True},
            )
        array = _new(parent, "dynamic_rnn_input_array", type="LOD_TENSOR_ARRAY", dtype=x.dtype)
        self.input_array.append((array, x.dtype, x, int(level)))
        parent.append_op(
            "lod_tensor_to_array",
            inputs={"X": x, "RankTable": self.lod_rank_table},
            outputs={"Out": array},
        )
        return array_read(array, self.step_idx)

    def static_input(self, x):
        """x (one row or sequence per input sequence, in input order) cut to the running
        sequences at each step, in the step's order."""
        self._assert_in_rnn_block("static_input")
        check_var("DynamicRNN.static_input", "x", x)
        if self.lod_rank_table is None:
            raise RuntimeError("DynamicRNN.static_input() must be called after step_input()")
        parent = self._parent_block()
        reordered = _new(
            parent,
            "dynamic_rnn_static_input_reordered",
            dtype=x.dtype,
            shape=x.shape,
            lod_level=x.lod_level,
        )
        parent.append_op(
            "reorder_lod_tensor_by_rank",
            inputs={"X": x, "RankTable": self.lod_rank_table},
            outputs={"Out": reordered},
        )
        return shrink_memory(reordered, self.step_idx, self.lod_rank_table)

    def memory(self, init=None, shape=None, value=0.0, need_reorder=False, dtype="float32"):
        """A value carried from one step to the next: starts as `init` (one row per sequence; in
        the rank table's order unless need_reorder=True reorders it from input order), or as
        `value` of `shape` per sequence. Returns this step's rows; set the next step's with
        update_memory."""
        self._assert_in_rnn_block("memory")
        parent = self._parent_block()
        if init is not None:
            check_var("DynamicRNN.memory", "init", init)
            if not _declared_in(parent, init.name):
                raise ValueError(
                    "DynamicRNN.memory: init '%s' is a variable of the step block; give a "
                    "variable made outside the block (one row per sequence, e.g. an encoder's "
                    "last state), or use memory(shape=..., value=...)" % init.name
                )
            source = init
            if need_reorder:
                if self.lod_rank_table is None:
                    raise ValueError(
                        "DynamicRNN.memory(need_reorder=True) needs step_input() called first"
                    )
                source = _new(
                    parent, "dynamic_rnn_mem_init_reordered", dtype=init.dtype, shape=init.shape
                )
                parent.append_op(
                    "reorder_lod_tensor_by_rank",
                    inputs={"X": init, "RankTable": self.lod_rank_table},
                    outputs={"Out": source},
                )
            mem = _new(parent, "dynamic_rnn_mem", dtype=init.dtype, shape=init.shape)
            parent.append_op("assign", inputs={"X": source}, outputs={"Out": mem})
            if self.lod_rank_table is None:
                raise ValueError("DynamicRNN.memory() needs step_input() called first")
            step_rows = shrink_memory(mem, self.step_idx, self.lod_rank_table)
            self.mem_dict[step_rows.name] = mem
            return step_rows
        if shape is None:
            raise ValueError("DynamicRNN.memory() needs init, or shape (and value)")
        if not self.input_array:
            raise ValueError("DynamicRNN.memory(shape=...) needs step_input() called first")
        if self.zero_idx is None:
            self.zero_idx = _new(parent, "zero_idx", dtype="int64", shape=[1], stop_gradient=True)
            parent.append_op(
                "fill_constant",
                outputs={"Out": self.zero_idx},
                attrs={"shape": [1], "dtype": dtype_code("int64"), "value": 0.0, "force_cpu": True},
            )
        array, in_dtype, x, level = self.input_array[0]
        if convert_dtype(in_dtype) in ("float32", "float64"):
            # One row per sequence (the first step of each, pad_value for an empty one): unlike
            # step 0's input (Fluid's batch reference) it exists when every sequence is empty.
            first = x
            for _ in range(max(1, x.lod_level) - level):
                pooled = _new(parent, "dynamic_rnn_in0", dtype=in_dtype, stop_gradient=True)
                max_index = _new(parent, "dynamic_rnn_in0", dtype="int32", stop_gradient=True)
                parent.append_op(
                    "sequence_pool",
                    inputs={"X": first},
                    outputs={"Out": pooled, "MaxIndex": max_index},
                    attrs={"pooltype": "FIRST", "is_test": True, "pad_value": 0.0},
                )
                first = pooled
        else:
            first = _new(parent, "dynamic_rnn_in0", dtype=in_dtype, stop_gradient=True)
            parent.append_op(
                "read_from_array", inputs={"X": array, "I": self.zero_idx}, outputs={"Out": first}
            )
        dtype = convert_dtype(dtype)
        boot = _new(
            parent,
            "dynamic_rnn_mem_init",
            dtype=dtype,
            shape=[-1] + [int(d) for d in shape],
            stop_gradient=True,
        )
        parent.append_op(
            "fill_constant_batch_size_like",
            inputs={"Input": first},
            outputs={"Out": boot},
            attrs={
                "shape": [-1] + [int(d) for d in shape],
                "value": float(value),
                "dtype": dtype_code(dtype),
                "input_dim_idx": 0,
                "output_dim_idx": 0,
            },
        )
        return self.memory(init=boot)

    def update_memory(self, ex_mem, new_mem):
        """The next step's value of memory `ex_mem` (what memory() returned) is `new_mem`."""
        self._assert_in_rnn_block("update_memory")
        check_var("DynamicRNN.update_memory", "ex_mem", ex_mem)
        check_var("DynamicRNN.update_memory", "new_mem", new_mem)
        mem = self.mem_dict.get(ex_mem.name)
        if mem is None:
            raise ValueError(
                "DynamicRNN.update_memory: '%s' is not a memory (call memory() first)" % ex_mem.name
            )
        self.mem_link.append((new_mem, mem))

    def output(self, *outputs):
        """Marks step values as outputs: rnn() returns them as LoD sequences."""
        self._assert_in_rnn_block("output")
        parent = self._parent_block()
        for each in outputs:
            check_var("DynamicRNN.output", "output", each)
            array = _new(
                parent,
                self.helper.name + ".output_array",
                type="LOD_TENSOR_ARRAY",
                dtype=each.dtype,
            )
            array_write(each, self.step_idx, array=array)
            self.output_array.append(array)

    def __call__(self, *args, **kwargs):
        if self.status != DynamicRNN.AFTER_RNN:
            raise ValueError("DynamicRNN's outputs can only be read after its block")
        return self.outputs[0] if len(self.outputs) == 1 else self.outputs


# -- StaticRNN ------------------------------------------------------------------------------------
class StaticRNN:
    """An RNN over time-major tensors of one length ([T, batch, ...]), Fluid's StaticRNN, run by
    the `recurrent` op (one step scope per step; recurrent_grad goes back over them)::

        rnn = layers.StaticRNN()
        with rnn.step():
            word = rnn.step_input(x)                         # [batch, D]
            prev = rnn.memory(shape=[-1, H], batch_ref=word)  # or memory(init=h0)
            h = layers.fc(input=[word, prev], size=H, act="tanh")
            rnn.update_memory(prev, h)
            rnn.step_output(h)
        hidden = rnn()                                      # [T, batch, H]
    """

    BEFORE_RNN_BLOCK, IN_RNN_BLOCK, AFTER_RNN_BLOCK = range(3)

    def __init__(self, name=None):
        self.helper = LayerHelper("static_rnn", name=name)
        self.memories = {}  # pre_mem name -> [init, pre_mem, new value]
        self.inputs = []  # the outer time-major variables
        self.outputs = []  # (the variable a step writes, the stacked output)
        self.status = StaticRNN.BEFORE_RNN_BLOCK
        self.seq_len = None

    def _parent_block(self):
        program = self.helper.main_program
        return program.block(program.current_block().parent_idx)

    def _assert_in_rnn_block(self, method):
        if self.status != StaticRNN.IN_RNN_BLOCK:
            raise ValueError("StaticRNN.%s() can only be called inside 'with rnn.step():'" % method)

    def step(self):
        """The step block: `with rnn.step(): ...`; entered once."""
        if self.status != StaticRNN.BEFORE_RNN_BLOCK:
            raise ValueError("StaticRNN.step() can be entered only once")
        return _StaticRNNGuard(self)

    def memory(
        self,
        init=None,
        shape=None,
        batch_ref=None,
        init_value=0.0,
        init_batch_dim_idx=0,
        ref_batch_dim_idx=1,
    ):
        """A value carried across steps: starts as `init`, or as init_value of `shape` whose
        dim init_batch_dim_idx is batch_ref's dim ref_batch_dim_idx (a step input names the
        outer [T, batch, ...] variable, hence 1)."""
        self._assert_in_rnn_block("memory")
        if init is None:
            if shape is None or batch_ref is None:
                raise ValueError("StaticRNN.memory() needs init, or shape and batch_ref")
            parent = self._parent_block()
            boot = _new(
                parent,
                self.helper.name + ".memory_boot",
                shape=list(shape),
                dtype=batch_ref.dtype,
                stop_gradient=True,
            )
            parent.append_op(
                "fill_constant_batch_size_like",
                inputs={"Input": [batch_ref]},
                outputs={"Out": [boot]},
                attrs={
                    "value": float(init_value),
                    "shape": [int(d) for d in shape],
                    "dtype": dtype_code(batch_ref.dtype),
                    "input_dim_idx": int(ref_batch_dim_idx),
                    "output_dim_idx": int(init_batch_dim_idx),
                },
            )
            return self.memory(init=boot)
        check_var("StaticRNN.memory", "init", init)
        pre_mem = _new(
            self.helper.main_program.current_block(),
            self.helper.name + ".mem",
            dtype=init.dtype,
            shape=init.shape,
        )
        self.memories[pre_mem.name] = [init, pre_mem, None]
        return pre_mem

    def step_input(self, x):
        """Row t of time-major x at step t."""
        self._assert_in_rnn_block("step_input")
        check_var("StaticRNN.step_input", "x", x)
        if self.seq_len is None:
            self.seq_len = x.shape[0]
        elif x.shape[0] != -1 and self.seq_len != -1 and self.seq_len != x.shape[0]:
            raise ValueError(
                "StaticRNN.step_input: '%s' has %d steps, an earlier input %d; a static RNN's "
                "inputs have one length" % (x.name, x.shape[0], self.seq_len)
            )
        block = self.helper.main_program.current_block()
        step_var = block.create_var(
            name=x.name, dtype=x.dtype, shape=list(x.shape[1:]), type=x.type
        )
        self.inputs.append(x)
        return step_var

    def step_output(self, o):
        """Marks a step value as an output: rnn() returns it stacked, [T, ...]."""
        self._assert_in_rnn_block("step_output")
        check_var("StaticRNN.step_output", "o", o)
        parent = self._parent_block()
        step_var = _new(parent, self.helper.name + ".step_output", dtype=o.dtype, shape=o.shape)
        assign(o, step_var)
        out = _new(
            parent,
            self.helper.name + ".output",
            dtype=o.dtype,
            shape=[self.seq_len if self.seq_len is not None else -1] + list(o.shape),
        )
        self.outputs.append((step_var, out))

    def output(self, *outputs):
        for o in outputs:
            self.step_output(o)

    def update_memory(self, mem, var):
        """The next step's value of memory `mem` is `var`."""
        self._assert_in_rnn_block("update_memory")
        check_var("StaticRNN.update_memory", "var", var)
        if not isinstance(mem, Variable) or mem.name not in self.memories:
            raise ValueError("StaticRNN.update_memory: %r is not a memory of this RNN" % (mem,))
        self.memories[mem.name][2] = var

    def __call__(self, *args, **kwargs):
        if self.status != StaticRNN.AFTER_RNN_BLOCK:
            raise ValueError("StaticRNN's outputs can only be read after its step block")
        outs = [out for _, out in self.outputs]
        return outs[0] if len(outs) == 1 else outs

    def _complete(self):
        program = self.helper.main_program
        body = program.current_block()
        parent = program.block(body.parent_idx)
        if not self.inputs:
            raise ValueError("StaticRNN: the step block must call step_input() at least once")
        inits, ex_states, states = [], [], []
        for init, pre_mem, new in self.memories.values():
            if new is None:
                raise ValueError(
                    "StaticRNN: memory '%s' is never updated (update_memory)" % pre_mem.name
                )
            state = _new(parent, self.helper.name + ".state", dtype=new.dtype, shape=new.shape)
            body.append_op("assign", inputs={"X": new}, outputs={"Out": state})
            inits.append(init)
            ex_states.append(pre_mem.name)
            states.append(state.name)
        params = []
        for op in body.ops:
            for name in op.input_arg_names:
                if name not in body.vars and name not in params:
                    params.append(name)
        params = [v for v in (parent._find_var_recursive(n) for n in params) if v is not None]
        step_scopes = _new(parent, self.helper.name + ".step_scopes", type="STEP_SCOPES")
        parent.append_op(
            "recurrent",
            inputs={"inputs": self.inputs, "initial_states": inits, "parameters": params},
            outputs={"outputs": [out for _, out in self.outputs], "step_scopes": [step_scopes]},
            attrs={
                "sub_block": body,
                "ex_states": ex_states,
                "states": states,
                "step_outputs": [v.name for v, _ in self.outputs],
                "has_states": bool(states),
                "reverse": False,
                "is_train": True,
            },
        )


class _StaticRNNGuard(BlockGuard):
    def __init__(self, rnn):
        super().__init__(rnn.helper.main_program)
        self.rnn = rnn

    def __enter__(self):
        self.rnn.status = StaticRNN.IN_RNN_BLOCK
        return super().__enter__()

    def __exit__(self, exc_type, exc_val, exc_tb):
        if exc_type is not None:
            self.main_program._rollback()
            return False
        self.rnn.status = StaticRNN.AFTER_RNN_BLOCK
        self.rnn._complete()
        return super().__exit__(exc_type, exc_val, exc_tb)


# -- beam search ----------------------------------------------------------------------------------
def beam_search(
    pre_ids,
    pre_scores,
    ids,
    scores,
    beam_size,
    end_id,
    level=0,
    is_accumulated=True,
    name=None,
    return_parent_idx=False,
):
    """One step of beam search (Fluid 1.x): for each source sentence, the beam_size best
    (prefix, candidate) pairs of scores (2-level LoD: source -> prefixes -> candidate rows).
    Ended prefixes (pre_id == end_id) stay ended; a source whose beams all ended is dropped.
    ids None: a candidate's id is its column. With is_accumulated=False a candidate's score is
    pre_score + log(score). Returns (selected_ids, selected_scores[, parent_idx])."""
    for arg, v in (("pre_ids", pre_ids), ("pre_scores", pre_scores), ("scores", scores)):
        check_var("beam_search", arg, v)
    helper = LayerHelper("beam_search", name=name)
    selected_ids = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    selected_scores = helper.create_variable_for_type_inference(scores.dtype, stop_gradient=True)
    parent_idx = helper.create_variable_for_type_inference("int32", stop_gradient=True)
    inputs = {"pre_ids": pre_ids, "pre_scores": pre_scores, "scores": scores}
    if ids is not None:
        inputs["ids"] = ids
    helper.append_op(
        "beam_search",
        inputs=inputs,
        outputs={
            "selected_ids": selected_ids,
            "selected_scores": selected_scores,
            "parent_idx": parent_idx,
        },
        attrs={
            "level": int(level),
            "beam_size": int(beam_size),
            "end_id": int(end_id),
            "is_accumulated": bool(is_accumulated),
        },
    )
    selected_ids.desc.lod_level = 2
    selected_scores.desc.lod_level = 2
    if return_parent_idx:
        return selected_ids, selected_scores, parent_idx
    return selected_ids, selected_scores


def beam_search_decode(ids, scores, beam_size, end_id, name=None):
    """The sentences of a beam search: ids and scores are the tensor arrays of each step's
    selected_ids / selected_scores. Returns (sentence_ids, sentence_scores), LoD source ->
    sentences (best first) -> ids."""
    helper = LayerHelper("beam_search_decode", name=name)
    sentence_ids = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    sentence_scores = helper.create_variable_for_type_inference(scores.dtype, stop_gradient=True)
    helper.append_op(
        "beam_search_decode",
        inputs={"Ids": ids, "Scores": scores},
        outputs={"SentenceIds": sentence_ids, "SentenceScores": sentence_scores},
        attrs={"beam_size": int(beam_size), "end_id": int(end_id)},
    )
    sentence_ids.desc.lod_level = 2
    sentence_scores.desc.lod_level = 2
    return sentence_ids, sentence_scores
