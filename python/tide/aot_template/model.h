/* model.h: a model compiled ahead of time by tide.aot.compile (docs/aot.md). model.cc holds the
 * frozen plan as constant tables; params.bin, beside it, the parameters. Link libtide_core; the
 * model loads only the plugins its plan names.
 *
 *   TideModel* m = tide_model_create("path/to/params.bin", NULL);  // NULL: the plugin path
 *   if (!m) fprintf(stderr, "%s\n", tide_model_last_error());
 *   TideModelTensor in = {data, TIDE_FP32, 2, dims, NULL, 0}, out;
 *   if (tide_model_run(m, &in, 1, &out, 1) != TIDE_OK) fprintf(stderr, "%s\n",
 *                                                             tide_model_last_error());
 *   tide_model_destroy(m);
 *
 * Errors never abort: create returns NULL, run a TideCode, and tide_model_last_error says what
 * failed (a feed of another data type or rank, or a dimension outside the plan's range, names the
 * feed, the dimension and the range). One run at a time per model. */
#ifndef TIDE_COMPILED_MODEL_MODEL_H_
#define TIDE_COMPILED_MODEL_MODEL_H_

#include <tide/compiled_model.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TideModel TideModel;

/* Loads the plan's plugins (from `plugin_dir`, ':'-separated, or when NULL the plugin path:
 * $TIDE_PLUGIN_PATH, then the core's plugin directory), reads `params_path` (params.bin or its
 * directory) and allocates the arena. NULL on failure. */
TideModel* tide_model_create(const char* params_path, const char* plugin_dir);
/* `inputs` in the plan's feed order (tide_model_plan()->feeds), `outputs` filled in its fetch
 * order; an output's memory is the model's, valid until the next run or destroy. TIDE_OK (0) or
 * the failure's code. */
int32_t tide_model_run(TideModel* model, const TideModelTensor* inputs, size_t num_inputs,
                       TideModelTensor* outputs, size_t num_outputs);
void tide_model_destroy(TideModel* model);
/* This thread's last failure's message ("" when none). */
const char* tide_model_last_error(void);
/* Capture and replay on a device that has it (CUDA graphs; docs/aot.md): 1 on, 0 off (the
 * default). With it on, the second run at a batch size is captured and later runs at that size
 * replay it. TIDE_OK or the failure's code. */
int32_t tide_model_set_capture(TideModel* model, int32_t on);
/* "" with capture off, "warming up", "captured", or why the model runs op by op; `replays` (may
 * be NULL): the runs that replayed. Valid until the model's next call. */
const char* tide_model_capture_note(TideModel* model, uint64_t* replays);
/* The plan's tables: feeds (names, dims with -1 for the batch, data types), fetches, the batch
 * range (lower, upper). */
const TideAotPlan* tide_model_plan(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TIDE_COMPILED_MODEL_MODEL_H_ */
