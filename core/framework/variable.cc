// variable.cc: creation of a variable's object from a VarDesc type.
#include "core/framework/variable.h"

namespace tide::core {

std::vector<LoDTensor>* Variable::GetTensorList() {
  switch (type_) {
    case TIDE_VAR_LOD_TENSOR_ARRAY:
      return GetMutable<LoDTensorArray>();
    case TIDE_VAR_FEED_MINIBATCH:
      return GetMutable<FeedList>();
    case TIDE_VAR_FETCH_LIST:
      return GetMutable<FetchList>();
    default:
      return nullptr;
  }
}

void Variable::InitByType(TideVarType type) {
  if (holder_ && type_ == type) return;
  switch (type) {
    case TIDE_VAR_LOD_TENSOR:
      GetMutable<LoDTensor>();
      break;
    case TIDE_VAR_SELECTED_ROWS:
      GetMutable<SelectedRows>();
      break;
    case TIDE_VAR_LOD_TENSOR_ARRAY:
      GetMutable<LoDTensorArray>();
      break;
    case TIDE_VAR_FEED_MINIBATCH:
      GetMutable<FeedList>();
      break;
    case TIDE_VAR_FETCH_LIST:
      GetMutable<FetchList>();
      break;
    case TIDE_VAR_STEP_SCOPES:
      GetMutable<StepScopes>();
      break;
    case TIDE_VAR_LOD_RANK_TABLE:
      GetMutable<LoDRankTable>();
      break;
    default:
      break;  // types owned by plugins are made by their ops
  }
}

}  // namespace tide::core
