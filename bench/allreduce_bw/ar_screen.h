/* The screen's verdict (ar_pairs_screen, before the world sweep; and the pairs rounds before their
 * remeasurement): which member, if any, the pairs it was in show slow. Pure: no MPI.
 *
 * Each pair is held to the median of the other pairs of its own round (measured at the same moment, under
 * the same load), or of every other pair when its round has fewer than AR_SCREEN_ROUND_PEERS others: a busy
 * machine slows a whole round, and pooling a busy round with a quiet one hid a node 60x slower ("no member
 * far below its peers", median pair 0.062 GB/s). A member is
 *   far: in AR_FAR_TIMES pairs or more below 1/AR_FAR_FACTOR of their references (the world's answer is
 * known); low: in AR_FAR_TIMES pairs or more, every one of them below 1/AR_LOW_FACTOR of the other pairs of
 * its own round (a pooled reference is not enough for this lesser gap), isolated by small sizes, one
 * operation each, as a far one is. One slow pairing (two ranks sharing a core of a loaded host) is one pair,
 * never enough. */
#ifndef AR_SCREEN_H
#define AR_SCREEN_H

#include <stdbool.h>

#define AR_SCREEN_ROUND_PEERS 2

typedef enum { AR_SCREEN_NONE = 0, AR_SCREEN_LOW = 1, AR_SCREEN_FAR = 2 } ar_screen_kind;

typedef struct {
    int member[2]; /* its members (node index, or rank on one node) */
    int round;
    double busbw; /* the pair's best figure; <= 0: not measured */
} ar_screen_pair;

typedef struct {
    ar_screen_kind kind;
    int member;    /* the member named, -1 when none */
    int pairs;     /* how many measured pairs it was in */
    int below;     /* of those, how many were below the kind's factor */
    double worst;  /* its lowest pair's busbw over that pair's reference */
    double median; /* the median pair of the screen */
} ar_screen_verdict;

/* Judges p[0..n-1] over members members (0..members-1). 0, or -1 when memory runs out. */
int ar_screen_judge(const ar_screen_pair *p, int n, int members, ar_screen_verdict *out);

#endif
