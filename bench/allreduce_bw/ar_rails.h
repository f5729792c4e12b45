/* --pattern rails: on an HGX node GPU i reaches the network through NIC i, so a communicator of GPU i of two
 * nodes measures rail i of both (GPU, NIC, cable, switch port). Each member is one rail end (node, local
 * index); the rail pairs of every round and every local index are judged together by the pairs' rule
 * (ga_pairs.h: a member slow with two partners or more and an outlier among the members' figures; a slow pair
 * with no such member is a slow cable or path between its two ends), every rail being the peer of every
 * other. Pure: the runner (ar_rails_run.c) fills the outcome, fixtures describe any cluster. */
#ifndef AR_RAILS_H
#define AR_RAILS_H

#include <jansson.h>
#include <stdbool.h>

#include "ar_opts.h"
#include "ga_findings.h"
#include "ga_pairs.h"

#define AR_RAIL_NIC_MAX 64
/* A slow rail pair with neither end slow elsewhere is judged against the other rail pairs alone: their spread
 * is the noise it must stand out of, and fewer than three others give no spread (two nodes of two GPUs: one
 * other pair, seen 0.10 against 0.56 GB/s, fault-free, on 4 ranks sharing 2 loaded cores). */
#define AR_RAILS_LINK_MIN_PAIRS 4

/* One rail end: a GPU of a node and the NIC its traffic between nodes used. */
typedef struct {
    int node, local;              /* node index; local rank (the GPU's index on its node) */
    char host[GA_PAIRS_HOST_MAX]; /* the node's host */
    int rank;                     /* its world rank */
    char nic[AR_RAIL_NIC_MAX];    /* the NIC NCCL used for it ("" unknown, as on the host path) */
    int gpu;                      /* the GPU's index on its node (NVML's), else the local rank */
    char pci_bus_id[24];          /* the GPU's PCI bus id ("" on the host path) */
} ar_rail_end;

/* What the rails pattern measured: rail pairs (ga_pair.member = ar_rail_member) and who each end is. */
typedef struct {
    ga_pair *pairs; /* ar_rails_judge sets their verdict fields */
    int n_pairs;
    int nodes, locals;       /* locals: ranks (GPUs) per node, the same on every node */
    int rounds;              /* rounds of node pairs that ran */
    bool cpus_shared;        /* a node has more ranks than CPUs (ga_pairs_analyse) */
    const ar_rail_end *ends; /* [nodes * locals], by ar_rail_member */
} ar_rails_outcome;

/* The member index of GPU local of node: node * locals + local. */
int ar_rail_member(int node, int local, int locals);

/* Judges the rails: COMM_SLOW_RAIL for each slow rail end ("node17 GPU 3 (mlx5_3)") and for each slow rail
 * pair with neither end slow elsewhere (both ends named: the cable or path between them; only among
 * AR_RAILS_LINK_MIN_PAIRS rail pairs or more). *part: the
 * report's "rails" object (NULL allowed). Returns the findings added, or -1 when memory runs out. */
int ar_rails_judge(ar_rails_outcome *r, double tolerance, ga_findings *f, json_t **part);

#endif
