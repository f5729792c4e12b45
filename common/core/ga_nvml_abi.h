/* The few NVML types and constants gpuaccept uses, as nvml.h declares them (NVML's ABI is stable), so that
 * building needs neither the driver nor its header. node_health and env_audit load NVML with dlopen; the NVML
 * test double defines the same functions. One copy, so the three cannot drift apart.
 * The double defines GA_NVML_DEVICE_TYPE to its own handle type before including this. */
#ifndef GA_NVML_ABI_H
#define GA_NVML_ABI_H

typedef int nvmlReturn_t;
#ifdef GA_NVML_DEVICE_TYPE
typedef GA_NVML_DEVICE_TYPE nvmlDevice_t;
#else
typedef void *nvmlDevice_t;
#endif

enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_RESET_REQUIRED = 16,
};

typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

typedef struct {
    unsigned char clusterUuid[16];
    nvmlReturn_t status;
    unsigned int cliqueId;
    unsigned char state;
} nvmlGpuFabricInfo_t;

/* nvmlFieldValue_t, for nvmlDeviceGetFieldValues (its value is a union of at most 8 bytes). */
typedef struct {
    unsigned int fieldId, scopeId;
    long long timestamp, latencyUsec;
    int valueType;
    nvmlReturn_t nvmlReturn;
    union {
        double dVal;
        unsigned int uiVal;
        unsigned long long ullVal;
    } value;
} nvmlFieldValue_t;

#define NVML_FI_DEV_GET_GPU_RECOVERY_ACTION 230
/* Per link (scopeId = the link): 0 HIGH_SPEED, 1 LOW_SPEED, the link asleep in its low-power state. */
#define NVML_FI_DEV_NVLINK_GET_POWER_STATE 167
#define NVML_NVLINK_LOW_POWER 1

/* Buffer sizes nvml.h gives. */
#define NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE 32
#define NVML_DEVICE_INFOROM_VERSION_BUFFER_SIZE 16

#endif
