/* lm_train's training data: a deterministic synthetic token stream with learnable structure, and a reader of
 * llm.c's uint16 token shards. Pure: no MPI, no CUDA; every batch is a function of (seed, sequence index), so
 * that ranks draw disjoint sequences without talking and a rerun draws the same ones.
 *
 * Synthetic stream: a fixed random order-1 Markov chain over the vocabulary. Each token has LM_MARKOV_FANOUT
 * distinct successors drawn from the seed, taken with the fixed probabilities LM_MARKOV_PROBS. Every row has
 * the same probabilities, so the chain's entropy rate is H = -sum_k p_k ln p_k whatever its stationary
 * distribution: with (0.7, 0.15, 0.1, 0.05), H = 0.9143 nats. A model that sees the current token can at best
 * reach a mean loss of H; an untrained one starts near ln(V) (5.55 for V = 256, 10.82 for 50257). The loss
 * falls first as the model learns which tokens follow which, then toward H as it learns the probabilities.
 *
 * Shard format (llm.c dev/data/data_common.py, write_datafile): a header of 256 little-endian int32 (1024
 * bytes): [0] magic 20240520, [1] version 1, [2] token count n; then n uint16 tokens. */
#ifndef LM_DATA_H
#define LM_DATA_H

#include <stddef.h>
#include <stdint.h>

#define LM_MARKOV_FANOUT 4
#define LM_MARKOV_PROBS                                                                                      \
    {                                                                                                        \
        0.7, 0.15, 0.1, 0.05                                                                                 \
    }
#define LM_SHARD_MAGIC 20240520
#define LM_SHARD_VERSION 1
#define LM_SHARD_HEADER_INTS 256

typedef struct {
    int vocab;  /* the model's vocabulary */
    int active; /* the chain's tokens: 0 .. active-1 (lm_markov_init_active) */
    uint64_t seed;
    int *successors; /* [active x LM_MARKOV_FANOUT] */
    double cumulative[LM_MARKOV_FANOUT];
    double entropy; /* nats per token: the lowest mean loss a model can reach */
} lm_markov;

/* The chain for vocab tokens (vocab > LM_MARKOV_FANOUT) from seed; 0, or -1 with a one-line message. */
int lm_markov_init(lm_markov *mc, int vocab, uint64_t seed, char *err, size_t errlen);

/* The chain over the first `active` tokens of a vocabulary of vocab (LM_MARKOV_FANOUT < active <= vocab). A
 * GPT-2 vocabulary of 50257 would leave each of 200,000 transitions seen a few times in a short run; over
 * LM_MARKOV_ACTIVE_MAX tokens the model first learns which tokens occur (ln V down to about ln active), then
 * their 4,096 transitions, and the loss falls measurably within the steps a profile runs. The floor is the
 * same entropy H. lm_markov_init is active = vocab. */
int lm_markov_init_active(lm_markov *mc, int vocab, int active, uint64_t seed, char *err, size_t errlen);
#define LM_MARKOV_ACTIVE_MAX 1024
void lm_markov_free(lm_markov *mc);

/* B sequences, first_sequence .. first_sequence + B - 1, of T inputs each and their T next-token targets (the
 * input shifted by one): tokens and targets are [B x T]. */
void lm_markov_batch(const lm_markov *mc, uint64_t first_sequence, int B, int T, int *tokens, int *targets);

typedef struct {
    uint16_t *tokens;
    size_t n_tokens;
} lm_shard;

/* Reads a whole shard and checks it for a model of vocabulary `vocab` and context seq_len: 0, or -1 with one
 * line naming the file and what is wrong (cannot open, short header, wrong magic or version, truncated or
 * over-long body, a token >= vocab, fewer than seq_len + 1 tokens). */
int lm_shard_load(const char *path, int vocab, int seq_len, lm_shard *s, char *err, size_t errlen);
void lm_shard_free(lm_shard *s);

/* Sequence i is the window of T + 1 tokens at (i * T) mod (n_tokens - T): consecutive sequences tile the
 * shard, and indices past its end wrap to its start. */
void lm_shard_batch(const lm_shard *s, uint64_t first_sequence, int B, int T, int *tokens, int *targets);

/* Writes n tokens as a shard (tests and tools); 0, or -1 with a one-line message. */
int lm_shard_write(const char *path, const uint16_t *tokens, size_t n, char *err, size_t errlen);

#endif
