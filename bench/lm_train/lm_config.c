/* lm_train's model configuration: named GPT-2 sizes, validation, parameter and FLOP counts, memory estimate.
 */
#include "lm_config.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    const char *name;
    int layers, channels, heads, seq_len, vocab;
} lm_named_size;

/* GPT-2's four sizes (Radford et al. 2019, table 2; llm.c train_gpt2.cu's "d12".."d48" depths) and the host
 * path's tiny default, small enough that a CI step takes milliseconds. */
static const lm_named_size lm_sizes[] = {
    {"tiny", 2, 64, 4, 64, 256},        {"d12", 12, 768, 12, 1024, 50257},
    {"d24", 24, 1024, 16, 1024, 50257}, {"d36", 36, 1280, 20, 1024, 50257},
    {"d48", 48, 1600, 25, 1024, 50257},
};

int lm_config_named(const char *name, lm_config *cfg, char *err, size_t errlen)
{
    for (size_t i = 0; i < sizeof lm_sizes / sizeof lm_sizes[0]; i++) {
        const lm_named_size *s = &lm_sizes[i];
        if (strcmp(name, s->name) == 0)
            return lm_config_make(cfg, s->layers, s->channels, s->heads, s->seq_len, s->vocab, err, errlen);
    }
    snprintf(err, errlen, "--model: '%s' is not one of tiny, d12, d24, d36, d48", name);
    return -1;
}

int lm_config_make(lm_config *cfg, int layers, int channels, int heads, int seq_len, int vocab, char *err,
                   size_t errlen)
{
    cfg->layers = layers;
    cfg->channels = channels;
    cfg->heads = heads;
    cfg->seq_len = seq_len;
    cfg->vocab = vocab;
    cfg->padded_vocab = vocab > 0 ? (vocab + LM_VOCAB_PAD - 1) / LM_VOCAB_PAD * LM_VOCAB_PAD : 0;
    return lm_config_validate(cfg, err, errlen);
}

/* One size against its range; the message names the flag that sets it. */
static int in_range(const char *flag, int value, int lo, int hi, char *err, size_t errlen)
{
    if (value >= lo && value <= hi)
        return 1;
    snprintf(err, errlen, "%s: %d is out of range [%d, %d]", flag, value, lo, hi);
    return 0;
}

int lm_config_validate(const lm_config *cfg, char *err, size_t errlen)
{
    /* The upper bounds keep every index the kernels form (B*T*4C, B*NH*T*T, T*Vp) inside the sizes they use,
     * and the vocabulary inside the uint16 tokens of the shard format. */
    if (!in_range("--layers", cfg->layers, 1, 256, err, errlen) ||
        !in_range("--channels", cfg->channels, 1, 32768, err, errlen) ||
        !in_range("--heads", cfg->heads, 1, 1024, err, errlen) ||
        !in_range("--seq-len", cfg->seq_len, 1, 32768, err, errlen) ||
        !in_range("--vocab", cfg->vocab, 2, 65536, err, errlen))
        return -1;
    if (cfg->channels % cfg->heads != 0) {
        snprintf(err, errlen, "--channels %d is not divisible by --heads %d", cfg->channels, cfg->heads);
        return -1;
    }
    if (cfg->padded_vocab < cfg->vocab || cfg->padded_vocab % LM_VOCAB_PAD != 0) {
        snprintf(err, errlen, "padded vocabulary %d is not %d rounded up to a multiple of %d",
                 cfg->padded_vocab, cfg->vocab, LM_VOCAB_PAD);
        return -1;
    }
    return 0;
}

size_t lm_layer_param_count(const lm_config *cfg)
{
    size_t c = (size_t)cfg->channels;
    size_t layernorms = 2 * (2 * c);     /* ln1 and ln2: weight and bias each */
    size_t attention = 3 * c * c + 3 * c /* qkv */
                       + c * c + c;      /* output projection */
    size_t mlp = 4 * c * c + 4 * c       /* fc: C -> 4C */
                 + 4 * c * c + c;        /* projection: 4C -> C */
    return layernorms + attention + mlp;
}

size_t lm_param_count(const lm_config *cfg)
{
    size_t c = (size_t)cfg->channels;
    size_t embeddings = (size_t)cfg->padded_vocab * c + (size_t)cfg->seq_len * c; /* wte (tied), wpe */
    return embeddings + (size_t)cfg->layers * lm_layer_param_count(cfg) + 2 * c;  /* + final layernorm */
}

double lm_flops_per_token(const lm_config *cfg, lm_flops_rule rule)
{
    double n = (double)lm_param_count(cfg);
    double lct = (double)cfg->layers * cfg->channels * cfg->seq_len;
    return 6.0 * n + (rule == LM_FLOPS_PALM ? 12.0 : 6.0) * lct;
}

size_t lm_activation_count(const lm_config *cfg, int batch)
{
    size_t bt = (size_t)batch * (size_t)cfg->seq_len, c = (size_t)cfg->channels;
    size_t scores = (size_t)batch * (size_t)cfg->heads * (size_t)cfg->seq_len * (size_t)cfg->seq_len;
    /* per block: ln1 C, qkv 3C, attention output C, residual C, ln2 C, MLP hidden 4C and GELU 4C, residual C
     * (16C per token); two layernorms' mean and rstd (4 per token); the attention probabilities */
    size_t per_layer = 16 * bt * c + 4 * bt + scores;
    size_t head = bt * c + 2 * bt                  /* final layernorm and its statistics */
                  + bt * (size_t)cfg->padded_vocab /* logits */
                  + 2 * bt;                        /* logsumexp and loss per position */
    return bt * c /* embeddings */ + (size_t)cfg->layers * per_layer + head;
}

lm_memory lm_memory_estimate(const lm_config *cfg, int batch, lm_precision prec)
{
    double n = (double)lm_param_count(cfg), acts = (double)lm_activation_count(cfg, batch);
    lm_memory m;
    if (prec == LM_PREC_FP32) {
        m.params = 4 * n;
        m.grads = 4 * n;
        m.activations = 2 * 4 * acts; /* activations and their gradients, fp32 */
    } else {
        m.params = 2 * n + 4 * n; /* bf16 working copy + fp32 master */
        m.grads = 2 * n;
        m.activations = 2 * 2 * acts;
    }
    m.optimizer = 2 * 4 * n;
    m.total = m.params + m.grads + m.optimizer + m.activations;
    return m;
}
