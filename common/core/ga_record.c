#include "ga_record.h"

#include <stdio.h>

#include "ga_log.h"

void ga_record_header_fail(ga_record_header *hdr, int status, const char *tag, const char *message)
{
    hdr->status = status;
    snprintf(hdr->message, sizeof hdr->message, "%s", message);
    ga_log_rank(tag, "%s", message);
}
