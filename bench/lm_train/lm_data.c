/* lm_train's data: the synthetic Markov stream and llm.c's token shards (formats in lm_data.h). */
#include "lm_data.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lm_rng.h"

/* Streams of lm_rng_for: the chain's table and the sequences never share one. */
enum { LM_STREAM_TABLE = 1, LM_STREAM_SEQUENCE = 2 };

int lm_markov_init(lm_markov *mc, int vocab, uint64_t seed, char *err, size_t errlen)
{
    return lm_markov_init_active(mc, vocab, vocab, seed, err, errlen);
}

int lm_markov_init_active(lm_markov *mc, int vocab, int active, uint64_t seed, char *err, size_t errlen)
{
    static const double probs[LM_MARKOV_FANOUT] = LM_MARKOV_PROBS;
    memset(mc, 0, sizeof *mc);
    if (vocab <= LM_MARKOV_FANOUT || active <= LM_MARKOV_FANOUT || active > vocab) {
        snprintf(err, errlen, "synthetic data needs a vocabulary above %d tokens, not %d", LM_MARKOV_FANOUT,
                 vocab < active ? vocab : active);
        return -1;
    }
    mc->successors = malloc((size_t)active * LM_MARKOV_FANOUT * sizeof *mc->successors);
    if (!mc->successors) {
        snprintf(err, errlen, "out of host memory for a synthetic chain over %d tokens", active);
        return -1;
    }
    mc->vocab = vocab;
    mc->active = active;
    mc->seed = seed;
    double cum = 0;
    for (int k = 0; k < LM_MARKOV_FANOUT; k++) {
        cum += probs[k];
        mc->cumulative[k] = cum;
        mc->entropy -= probs[k] * log(probs[k]);
    }
    lm_rng r = lm_rng_for(seed, LM_STREAM_TABLE, 0);
    for (int a = 0; a < active; a++) {
        int *next = mc->successors + (size_t)a * LM_MARKOV_FANOUT;
        for (int k = 0; k < LM_MARKOV_FANOUT; k++) {
            int again;
            do { /* distinct successors, so that the row's probabilities are exactly LM_MARKOV_PROBS */
                next[k] = (int)lm_rng_below(&r, (uint32_t)active);
                again = 0;
                for (int j = 0; j < k; j++)
                    again |= next[j] == next[k];
            } while (again);
        }
    }
    return 0;
}

void lm_markov_free(lm_markov *mc)
{
    free(mc->successors);
    memset(mc, 0, sizeof *mc);
}

static int markov_step(const lm_markov *mc, int token, lm_rng *r)
{
    double u = lm_rng_uniform(r);
    int k = 0;
    while (k < LM_MARKOV_FANOUT - 1 && u >= mc->cumulative[k])
        k++;
    return mc->successors[(size_t)token * LM_MARKOV_FANOUT + k];
}

void lm_markov_batch(const lm_markov *mc, uint64_t first_sequence, int B, int T, int *tokens, int *targets)
{
    for (int b = 0; b < B; b++) {
        lm_rng r = lm_rng_for(mc->seed, LM_STREAM_SEQUENCE, first_sequence + (uint64_t)b);
        int cur = (int)lm_rng_below(&r, (uint32_t)mc->active);
        for (int t = 0; t < T; t++) {
            int next = markov_step(mc, cur, &r);
            tokens[(size_t)b * T + t] = cur;
            targets[(size_t)b * T + t] = next;
            cur = next;
        }
    }
}

/* The header's checks; the token count into *n. */
static int check_header(const char *path, const int32_t *h, long file_bytes, size_t *n, char *err,
                        size_t errlen)
{
    if (h[0] != LM_SHARD_MAGIC) {
        snprintf(err, errlen, "%s: magic %d, not %d: not an llm.c token shard", path, h[0], LM_SHARD_MAGIC);
        return -1;
    }
    if (h[1] != LM_SHARD_VERSION) {
        snprintf(err, errlen, "%s: version %d; only version %d (uint16 tokens) is read", path, h[1],
                 LM_SHARD_VERSION);
        return -1;
    }
    long body = file_bytes - LM_SHARD_HEADER_INTS * 4;
    if (h[2] <= 0 || (long)h[2] * 2 != body) {
        snprintf(err, errlen, "%s: header says %d tokens, the file holds %ld bytes of tokens (%s)", path,
                 h[2], body, (long)h[2] * 2 > body ? "truncated" : "trailing bytes");
        return -1;
    }
    *n = (size_t)h[2];
    return 0;
}

/* The body's checks: every token inside the vocabulary, enough of them for one sequence. */
static int check_tokens(const char *path, const lm_shard *s, int vocab, int seq_len, char *err, size_t errlen)
{
    for (size_t i = 0; i < s->n_tokens; i++)
        if (s->tokens[i] >= vocab) {
            snprintf(err, errlen, "%s: token %u at position %zu is not below the vocabulary %d", path,
                     s->tokens[i], i, vocab);
            return -1;
        }
    if (s->n_tokens < (size_t)seq_len + 1) {
        snprintf(err, errlen, "%s: %zu tokens, fewer than seq-len + 1 = %d", path, s->n_tokens, seq_len + 1);
        return -1;
    }
    return 0;
}

/* Reads the header and the tokens of an open file into s. */
static int read_shard(FILE *f, const char *path, lm_shard *s, char *err, size_t errlen)
{
    int32_t h[LM_SHARD_HEADER_INTS];
    if (fseek(f, 0, SEEK_END) != 0) {
        snprintf(err, errlen, "%s: cannot seek: %s", path, strerror(errno));
        return -1;
    }
    long bytes = ftell(f);
    rewind(f);
    if (bytes < (long)sizeof h || fread(h, sizeof h, 1, f) != 1) {
        snprintf(err, errlen, "%s: %ld bytes, shorter than the %zu-byte header", path, bytes, sizeof h);
        return -1;
    }
    if (check_header(path, h, bytes, &s->n_tokens, err, errlen) != 0)
        return -1;
    s->tokens = malloc(s->n_tokens * sizeof *s->tokens);
    if (!s->tokens || fread(s->tokens, sizeof *s->tokens, s->n_tokens, f) != s->n_tokens) {
        snprintf(err, errlen, "%s: cannot read %zu tokens", path, s->n_tokens);
        return -1;
    }
    return 0;
}

int lm_shard_load(const char *path, int vocab, int seq_len, lm_shard *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    int rc = read_shard(f, path, s, err, errlen);
    fclose(f);
    if (rc == 0)
        rc = check_tokens(path, s, vocab, seq_len, err, errlen);
    if (rc != 0)
        lm_shard_free(s);
    return rc;
}

void lm_shard_free(lm_shard *s)
{
    free(s->tokens);
    memset(s, 0, sizeof *s);
}

void lm_shard_batch(const lm_shard *s, uint64_t first_sequence, int B, int T, int *tokens, int *targets)
{
    uint64_t span = (uint64_t)(s->n_tokens - (size_t)T); /* window starts 0 .. n - T - 1 */
    for (int b = 0; b < B; b++) {
        size_t start = (size_t)(((first_sequence + (uint64_t)b) * (uint64_t)T) % span);
        for (int t = 0; t < T; t++) {
            tokens[(size_t)b * T + t] = s->tokens[start + (size_t)t];
            targets[(size_t)b * T + t] = s->tokens[start + (size_t)t + 1];
        }
    }
}

int lm_shard_write(const char *path, const uint16_t *tokens, size_t n, char *err, size_t errlen)
{
    int32_t h[LM_SHARD_HEADER_INTS] = {LM_SHARD_MAGIC, LM_SHARD_VERSION, (int32_t)n};
    FILE *f = fopen(path, "wb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
        return -1;
    }
    int ok = fwrite(h, sizeof h, 1, f) == 1 && fwrite(tokens, sizeof *tokens, n, f) == n;
    if (fclose(f) != 0 || !ok) {
        snprintf(err, errlen, "%s: cannot write %zu tokens", path, n);
        return -1;
    }
    return 0;
}
