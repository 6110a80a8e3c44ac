// variable.h: a type-erased slot that holds one LoDTensor, SelectedRows, tensor array, feed or
// fetch list, step scopes or LoD rank table; Fluid's Variable.
#pragma once

#include <tide/plugin_api.h>

#include <memory>
#include <vector>

#include "core/framework/selected_rows.h"
#include "core/framework/tensor.h"
#include "core/platform/data_type.h"
#include "core/platform/enforce.h"

namespace tide::core {

class Scope;

// The list types are all vectors of LoDTensor (so the C ABI views them alike); the distinct
// types keep a variable's kind.
struct LoDTensorArray : std::vector<LoDTensor> {
  using std::vector<LoDTensor>::vector;
};
struct FeedList : std::vector<LoDTensor> {
  using std::vector<LoDTensor>::vector;
};
struct FetchList : std::vector<LoDTensor> {
  using std::vector<LoDTensor>::vector;
};
struct StepScopes : std::vector<Scope*> {};
// A LoDRankTable (Fluid's DynamicRNN): the sequences of a LoD level sorted by length, longest
// first, kept as an int64 CPU tensor [n, 2] of (sequence index, length) rows whose LoD is the
// table's coarse LoD, so the C ABI views it as any tensor.
struct LoDRankTable {
  LoDTensor table;
};

template <typename T>
struct VarTypeTrait;
template <>
struct VarTypeTrait<LoDTensor> {
  static constexpr TideVarType kType = TIDE_VAR_LOD_TENSOR;
};
template <>
struct VarTypeTrait<SelectedRows> {
  static constexpr TideVarType kType = TIDE_VAR_SELECTED_ROWS;
};
template <>
struct VarTypeTrait<LoDTensorArray> {
  static constexpr TideVarType kType = TIDE_VAR_LOD_TENSOR_ARRAY;
};
template <>
struct VarTypeTrait<FeedList> {
  static constexpr TideVarType kType = TIDE_VAR_FEED_MINIBATCH;
};
template <>
struct VarTypeTrait<FetchList> {
  static constexpr TideVarType kType = TIDE_VAR_FETCH_LIST;
};
template <>
struct VarTypeTrait<StepScopes> {
  static constexpr TideVarType kType = TIDE_VAR_STEP_SCOPES;
};
template <>
struct VarTypeTrait<LoDRankTable> {
  static constexpr TideVarType kType = TIDE_VAR_LOD_RANK_TABLE;
};

class Variable {
 public:
  TideVarType type() const { return type_; }
  bool IsInitialized() const { return holder_ != nullptr; }
  template <typename T>
  bool IsType() const {
    return type_ == VarTypeTrait<T>::kType;
  }

  // The held object, made on first use; asking for another type than the one held is an error.
  template <typename T>
  T* GetMutable() {
    if (!holder_) {
      holder_.reset(new Holder<T>());
      object_ = holder_->ptr();
      type_ = VarTypeTrait<T>::kType;
    } else {
      TIDE_ENFORCE(IsType<T>(), "variable holds ", VarTypeName(type_), ", used as ",
                   VarTypeName(VarTypeTrait<T>::kType));
    }
    return static_cast<T*>(object_);
  }
  template <typename T>
  const T& Get() const {
    TIDE_ENFORCE(holder_ != nullptr, "variable holds nothing, read as ",
                 VarTypeName(VarTypeTrait<T>::kType));
    TIDE_ENFORCE(IsType<T>(), "variable holds ", VarTypeName(type_), ", read as ",
                 VarTypeName(VarTypeTrait<T>::kType));
    return *static_cast<const T*>(object_);
  }
  // The tensor list of an array, feed or fetch variable; nullptr for other types.
  std::vector<LoDTensor>* GetTensorList();
  // Makes the variable hold an empty object of `type` (as the executor does from a VarDesc).
  void InitByType(TideVarType type);
  void Clear() {
    holder_.reset();
    object_ = nullptr;
    type_ = TIDE_VAR_UNINITIALIZED;
  }

 private:
  struct HolderBase {
    virtual ~HolderBase() = default;
    virtual void* ptr() = 0;
  };
  template <typename T>
  struct Holder : HolderBase {
    T value;
    void* ptr() override { return &value; }
  };
  std::unique_ptr<HolderBase> holder_;
  void* object_ = nullptr;  // holder_->ptr(), kept: read for every input of every op run
  TideVarType type_ = TIDE_VAR_UNINITIALIZED;
};

}  // namespace tide::core
