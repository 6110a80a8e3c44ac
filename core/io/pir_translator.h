// pir_translator.h: the translation of a PIR program's operations into a Fluid ProgramDesc
// (pir_program.h), one Translator per file read. Its parts: values, attributes and the dispatch
// (pir_program.cc), the table's rules and the builtin operations (pir_translate_ops.cc), control
// flow and in-place operations (pir_translate_control.cc). Internal to core/io.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/io/pir_json.h"
#include "core/io/pir_op_table.h"
#include "framework.pb.h"

namespace tide::core::pir {

// One PIR value: the Fluid variable holding it, or a builtin.combine's list of values; and the
// value itself when a constant op made it (for folding into attributes).
struct PirValue {
  std::string var;
  bool is_list = false;
  std::vector<int64_t> items;
  std::optional<Attribute> constant;
  int dtype = -1;
  std::string made_by;        // the PIR op, for errors
  bool untranslated = false;  // computed by an operation Tide lacks (listed in one error)
  int rank = -1;
  // A pd_op.stack of 0-D values (a shape built at run time): those values, which Fluid's list
  // inputs (ShapeTensorList, ...) take one by one. Tide holds 0-D values as [1], so the stack
  // itself would be [n, 1], not the [n] Paddle's reader expects.
  std::vector<int64_t> scalars;
};

class Translator {
 public:
  explicit Translator(const std::string& file) : file_(file) {}
  proto::ProgramDesc Run(const Json& root);

 private:
  [[noreturn]] void Fail(const Json& at, const std::string& what) const { at.Fail(what); }

  // --- Variables, values, attributes and the dispatch by operation (pir_program.cc) ----------

  void AddVar(const std::string& name, int type, int dtype, const std::vector<int64_t>& dims,
              bool persistable, int lod_level = 0, bool zero_dim = false);

  // Declares the variable of a result from its PIR type ("TT"); returns its data type.
  int DeclareResult(const Json& result, const std::string& name, bool persistable);

  // Declares a variable of PIR type `tt`; returns its data type.
  int DeclareType(const Json& tt, const std::string& name, bool persistable);

  // The items of a vector result (PIR type 0.t_vec), each a fresh variable under an id of its
  // own, listed in `list`. Their ids count up from INT64_MIN: PIR numbers op results 1, 2, ...
  // and block arguments -1, -2, ..., so neither range meets theirs (items counted down from -1
  // were a while body's arguments: a split in a loop overwrote the loop's carried values).
  void DeclareVector(const Json& result, const std::string& hint, PirValue* list);
  std::string FreshName(const std::string& hint, int64_t id);
  const PirValue& ValueOf(const Json& operand);

  // An attribute's JSON ({"#": kind, "D": data}) as a Tide attribute; nullopt for the kinds that
  // carry nothing for Tide (a place).
  std::optional<Attribute> AttrOf(const Json& at);
  Attribute ArrayOf(const Json& d);

  // {name: value} of an op's "A" list (a builtin.parameter's is positional, handled apart).
  AttributeMap AttrsOf(const Json& op);
  std::vector<Json> Results(const Json& op);
  Json FirstResult(const Json& op);

  // An op's name with its dialect spelled out ("1.relu" is "pd_op.relu").
  static std::string OpName(const Json& op);
  void Op(const Json& op);

  // --- Control flow: pd_op.if / pd_op.while as Fluid's conditional_block / while, in-place
  // operations (pir_translate_control.cc) ---------------------------------------------------

  // Records the values that in-place operations change (their operand; PIR's in-place result is
  // the same tensor): a constant op made them, but they must not be folded into attributes.
  void FindMutated(const Json& ops);

  // The operand whose tensor an in-place operation ("pd_op.relu_") changes into its first result,
  // or -1. Paddle's in-place ops change their first operand (ops.yaml's `inplace : (x -> out)`),
  // but for a few; those whose table line says which results share operands (batch_norm_'s mean
  // and variance) are handled by the line.
  static int InPlaceOperand(const std::string& name);

  // After an in-place operation: its result holds the operand's tensor, changed. The Fluid op
  // wrote a variable of its own; where the operand is a variable of this block, readers of the
  // operand from now on read that one; where it is a variable of an enclosing block (a loop's
  // counter incremented in the loop body), the result is copied into it, so that the next
  // iteration and the ops after the loop see the change, as in Paddle.
  void InPlace(int64_t operand_id, int64_t result_id);
  int VarBlock(const std::string& var) const;
  void AddAssign(const std::string& from, const std::string& to);

  // A sub-block of the current block, made the current one.
  void EnterNewBlock();

  // Translates the ops of a region's one block into the current block, up to its closing
  // cf.yield, whose operands it returns.
  std::vector<Json> RegionBody(const Json& region, const std::string& owner);

  // The ops of an operation Tide does not translate, only for listing the unknown ones (the
  // region's block arguments are unknown values, as are its results).
  void SkipRegions(const Json& op);

  // A yielded value (the if's or the loop's result), or why it cannot be one.
  const PirValue* Yielded(const Json& operand, const std::string& owner);

  // pd_op.if (cond) {true region} {false region}, each region ending in cf.yield(results...):
  // Paddle 2.x's form of `cond`: two conditional_blocks, on cond and on its negation, whose
  // sub-blocks assign their yields to variables of their own, and per result a select_input of
  // the one the branch that ran wrote (Mask: cond as int32). Values of enclosing blocks that
  // the regions read are read by name; FinishPirBlocks lists them as the ops' inputs.
  void If(const Json& op);

  // pd_op.while (cond, init...) {body(args...) ... cf.yield(next cond, next values...)}, its
  // results the values of the last iteration: Fluid's while. Each loop-carried value gets a
  // variable of the enclosing block, assigned its initial value before the loop, which the body
  // reads as its block argument and the loop's result is; the body's yield assigns the next
  // values to them and the next condition to the loop's condition variable, as Fluid's While
  // writes its variables back. is_test: one scope serves every iteration (inference).
  void While(const Json& op);

  // pd_op.create_array: an empty tensor array, written by array_write_ in place. Tide's executor
  // keeps a block's variables from one run (or iteration) to the next, so the array is emptied
  // where Paddle creates it: tensor_array_sum of an array nothing writes, which has no elements.
  void CreateArray(const Json& op);

  // --- The table's operations and the builtin ones (pir_translate_ops.cc) -------------------

  // An op Tide lacks, or one reading its results: skipped, so that the error lists every
  // operation the table lacks rather than stopping at the first reader.
  void MarkUntranslated(const Json& op, const std::string& name);
  bool ReadsUntranslated(const Json& op);
  void Parameter(const Json& op, const std::string& name);
  void Combine(const Json& op);
  void Unpack(const Json& op, const std::string& name);
  void Feed(const Json& op);
  void Fetch(const Json& op);

  // pd_op.full_int_array: a constant IntArray (a shape, axes, kernel size); becomes an attribute
  // of its readers where they take one, and an assign_value op for those that read a tensor.
  void FullIntArray(const Json& op);

  // pd_op.assign_value(_) (paddle.to_tensor of a list): its values, as Fluid's assign_value of
  // the result's type (its in-place operand, a placeholder, is not read). Integer values are a
  // constant too, for readers taking an IntArray attribute.
  void AssignValue(const Json& op);
  static void AddArgs(proto::OpDesc::Var* var, const std::string& param,
                      const std::vector<std::string>& args);

  // `a` for the attribute `spec` declares. Integers from an IntArray or a Scalar (int64 in PIR)
  // saturate into int32: an open slice end (INT64_MAX) is Fluid's INT32_MAX.
  bool Convert(const Attribute& a, TideAttrType want, Attribute* out);
  void Translate(const Json& op, const std::string& name, const PirOpRule& rule);

  // Records a stack (axis 0) of a builtin.combine of 0-D values as those values, and as a
  // constant IntArray when they all are constants.
  void StackOfScalars(const std::vector<const PirValue*>& operands, const AttributeMap& attrs,
                      PirValue* out);

  // A pd_op.full of one element, as the constant its readers can fold: int64, bool or double by
  // its dtype.
  static std::optional<Attribute> FullScalar(const AttributeMap& attrs);

  const std::string& file_;
  int64_t version_ = 0;
  proto::ProgramDesc program_;
  proto::BlockDesc* block_ = nullptr;
  std::map<int64_t, PirValue> values_;
  int64_t next_item_id_ = std::numeric_limits<int64_t>::min();  // DeclareVector's items' ids
  std::set<std::string> names_;
  std::map<std::string, int> unknown_;
  std::set<int64_t> mutated_;             // values in-place operations change (FindMutated)
  std::map<std::string, int> var_block_;  // the block declaring each variable
  std::set<std::string> bad_attrs_;
  int32_t feeds_ = 0;
  int last_rank_ = -1;  // of the last DeclareResult
};

}  // namespace tide::core::pir
