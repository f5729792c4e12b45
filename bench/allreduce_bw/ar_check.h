/* The device check of the GPU path (ar_check.cu): inputs generated and outputs compared by kernels from the
 * per-element maths of ar_elem.h, as nccl-tests does, instead of a fill and a compare on one CPU core with
 * two copies per size (about 4 s per GiB). Both launch on the given CUDA stream (a cudaStream_t) and return
 * the launch's cudaError_t (0: queued); nothing waits. */
#ifndef AR_CHECK_H
#define AR_CHECK_H

#include "ar_elem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the job's rank's input (send_count elements) into buf, device memory. */
int ar_dev_fill(void *buf, const ar_elem_job *job, void *stream);
/* Adds the number of wrong elements of the job's rank's output (recv_count elements at buf, device memory)
 * to *wrong, a device counter. */
int ar_dev_count_wrong(const void *buf, const ar_elem_job *job, unsigned long long *wrong, void *stream);

#ifdef __cplusplus
}
#endif

#endif
