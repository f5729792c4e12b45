/* The double's CUDA graphs. */
#include "gd.h"

#include <stdlib.h>

/* ---- CUDA graphs: a capture records the stream's work; each launch queues a fresh copy of it ---- */

struct CUgraph_st {
    work *head;
};
struct CUgraphExec_st {
    work *head;
};

static work *clone_list(const work *from)
{
    work *head = NULL, **at = &head;
    for (; from; from = from->next) {
        work *w = gd_work_new(from->kind);
        *w = *from;
        w->next = NULL;
        if (from->coll) {
            w->coll = gd_coll_clone(from->coll);
        }
        *at = w;
        at = &w->next;
    }
    return head;
}

static void free_list(work *w)
{
    while (w) {
        work *next = w->next;
        free(w->coll);
        free(w);
        w = next;
    }
}

EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    (void)mode;
    if (gd_fail_now(GD_FN_BEGIN_CAPTURE))
        return gd_last_error = cudaErrorStreamCaptureUnsupported;
    if (!stream) /* as CUDA: the legacy default stream cannot be captured */
        return gd_last_error = cudaErrorStreamCaptureUnsupported;
    struct CUstream_st *s = gd_stream_of(stream);
    if (s->capturing)
        return gd_last_error = cudaErrorIllegalState;
    s->capturing = true;
    s->cap_head = s->cap_tail = NULL;
    gd_counts.captures++;
    return cudaSuccess;
}

EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph)
{
    struct CUstream_st *s = gd_stream_of(stream);
    if (!s->capturing)
        return gd_last_error = cudaErrorIllegalState;
    s->capturing = false;
    if (gd_fail_now(GD_FN_END_CAPTURE)) {
        free_list(s->cap_head);
        s->cap_head = s->cap_tail = NULL;
        return gd_last_error = cudaErrorStreamCaptureInvalidated;
    }
    *graph = calloc(1, sizeof **graph);
    if (!*graph)
        return gd_last_error = cudaErrorMemoryAllocation;
    (*graph)->head = s->cap_head;
    s->cap_head = s->cap_tail = NULL;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags)
{
    (void)flags;
    if (gd_fail_now(GD_FN_GRAPH_INSTANTIATE))
        return gd_last_error = cudaErrorInvalidValue;
    *exec = calloc(1, sizeof **exec);
    if (!*exec)
        return gd_last_error = cudaErrorMemoryAllocation;
    (*exec)->head = clone_list(graph->head);
    gd_counts.instantiated++;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream)
{
    if (gd_fail_now(GD_FN_GRAPH_LAUNCH))
        return gd_last_error = cudaErrorLaunchFailure;
    gd_counts.launches++;
    for (work *w = clone_list(exec->head), *next; w; w = next) {
        next = w->next;
        w->next = NULL;
        if (w->coll)
            gd_coll_issue(w->coll);
        gd_enqueue(stream, w);
    }
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
    if (exec)
        free_list(exec->head);
    free(exec);
    gd_counts.execs_destroyed++;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    if (graph)
        free_list(graph->head);
    free(graph);
    gd_counts.graphs_destroyed++;
    return cudaSuccess;
}
