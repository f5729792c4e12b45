/* lm_train's model configuration: the GPT-2 family's named sizes, explicit sizes and their validation, the
 * parameter count, the FLOPs per token used for MFU, and the memory a configuration needs, so that one that
 * does not fit is refused before training. Pure: no MPI, no CUDA. */
#ifndef LM_CONFIG_H
#define LM_CONFIG_H

#include <stddef.h>

#define LM_VOCAB_PAD 128 /* the vocabulary is padded to a multiple of this (GPT-2: 50257 -> 50304) */

typedef struct {
    int layers;       /* L: transformer blocks */
    int channels;     /* C: model width */
    int heads;        /* NH: attention heads; C % NH == 0 */
    int seq_len;      /* T: context length (learned position embeddings) */
    int vocab;        /* V: real vocabulary */
    int padded_vocab; /* Vp: V rounded up to LM_VOCAB_PAD */
} lm_config;

/* The named sizes: "tiny" (the host path's default: 2 layers, 64 channels, 4 heads, seq 64, vocab 256), and
 * GPT-2's "d12" (124M), "d24" (350M), "d36" (774M), "d48" (1558M), all at seq 1024 and vocab 50257. 0, or -1
 * with a one-line message naming the sizes that exist. */
int lm_config_named(const char *name, lm_config *cfg, char *err, size_t errlen);

/* Explicit sizes; fills padded_vocab and validates. 0, or -1 with a one-line message. */
int lm_config_make(lm_config *cfg, int layers, int channels, int heads, int seq_len, int vocab, char *err,
                   size_t errlen);

/* 0 when the sizes hold together (positive, C divisible by NH, within the int ranges the kernels index),
 * else -1 with a one-line message such as "--channels 100 is not divisible by --heads 3". */
int lm_config_validate(const lm_config *cfg, char *err, size_t errlen);

/* Parameters with the padded vocabulary (as llm.c counts them: d12 gives 124,475,904). */
size_t lm_param_count(const lm_config *cfg);

/* Parameters of one transformer block (its two layernorms, attention and MLP, weights and biases). */
size_t lm_layer_param_count(const lm_config *cfg);

/* Which attention term the FLOPs per token count. */
typedef enum {
    LM_FLOPS_LLMC, /* 6N + 6*L*C*T: llm.c's gpt2_estimate_mfu; the causal mask halves the score work */
    LM_FLOPS_PALM  /* 6N + 12*L*C*T: PaLM (Chowdhery et al. 2022, app. B) and nanoGPT's estimate_mfu */
} lm_flops_rule;

/* Training FLOPs (forward + backward) per token, N the padded parameter count. The suite reports MFU with
 * LM_FLOPS_LLMC so that its figures compare with llm.c's printed MFU; LM_FLOPS_PALM is there to state the
 * other convention beside it. */
double lm_flops_per_token(const lm_config *cfg, lm_flops_rule rule);

/* Activation floats of one forward pass of batch B at the config's T, as the host model lays them out
 * (lm_model.h): residual stream, layernorm outputs and statistics, qkv, the attention probabilities
 * (B*NH*T*T; the scores are computed in place), MLP hidden before and after GELU, logits over Vp, per-row
 * logsumexp and losses. */
size_t lm_activation_count(const lm_config *cfg, int batch);

typedef enum {
    LM_PREC_FP32,      /* host path: fp32 parameters, gradients, activations */
    LM_PREC_BF16_MIXED /* GPU path: bf16 parameters/gradients/activations beside fp32 master weights */
} lm_precision;

typedef struct {
    double params;      /* bytes of the parameters (and, mixed, the fp32 master copy) */
    double grads;       /* bytes of the parameter gradients */
    double optimizer;   /* AdamW's m and v, fp32 */
    double activations; /* activations and their gradients for one micro-batch */
    double total;
} lm_memory;

/* Bytes needed to train cfg at micro-batch B: params + grads + AdamW (2 x fp32 per parameter) + activations
 * and activation gradients (this model keeps both whole). An estimate for the GPU path: workspace of the
 * libraries and the allocator's slack are not in it, so the caller keeps a margin. */
lm_memory lm_memory_estimate(const lm_config *cfg, int batch, lm_precision prec);

#endif
