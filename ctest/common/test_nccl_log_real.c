/* The NCCL debug parser (ga_nccl_log) on a whole log that a real NCCL wrote: allreduce_bw on one H200 with
 * NCCL 2.28.3 (docs/measured-on-gpu.md, third run), one communicator of one rank, no network between nodes,
 * the IB network without devices and the Socket network on eth0. Its lines carry no time stamp
 * (NCCL_DEBUG_TIMESTAMP unset), unlike the hand-written lines of test_transport.c. usage: test_nccl_log_real
 * LOG */
#include <stdio.h>
#include <string.h>

#include "ga_nccl_log.h"
#include "ga_test.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_nccl_log_real LOG\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    ga_nccl_log_process p;
    ga_nccl_log_comm c;
    ga_nccl_log_process_init(&p);
    ga_nccl_log_comm_init(&c);
    ga_nccl_log_comm *one[1] = {&c};
    char line[4096];
    int lines = 0;
    while (fgets(line, sizeof line, f)) {
        ga_nccl_log_line(&p, one, 1, line);
        lines++;
    }
    fclose(f);
    CHECK(lines == 301);
    CHECKF(c.lines == lines, "%d of %d lines taken as NCCL's", c.lines, lines);
    CHECK_STR(c.net_name, "Socket");
    CHECK(c.nranks == 1 && c.nnodes == 1 && c.local_ranks == 1 && c.mnnvl == 0);
    CHECK_STR(c.intra_type, "LOC");
    CHECK(c.net_conns == 0 && c.gdr_conns == 0 && c.p2p == 0 && c.shm == 0 && c.collnet == 0);
    CHECK(c.nvls_channels == 0);
    CHECK(p.warn_lines == 0);
    CHECK(p.ofi_provider[0] == '\0');
    const ga_nlog_devices *sock = ga_nccl_log_devices(&p, "Socket");
    CHECK(sock && sock->n == 1 && strcmp(sock->name[0], "eth0") == 0);
    const ga_nlog_devices *ib = ga_nccl_log_devices(&p, "IB");
    CHECK(!ib || ib->n == 0); /* "NET/IB : Using [RO]; OOB ...": the table of no device */
    return ga_test_finish();
}
