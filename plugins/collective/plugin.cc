// plugin.cc: the collective op pack's entry points. The ops register themselves from their files.
#include <tide/plugin.hpp>

TIDE_PLUGIN("collective", "0.1.0",
            "Collective communication on Gloo (CPU) and a device's own library "
            "(tide/collective.h): c_comm_init, c_allreduce_sum/max/min/prod, "
            "c_broadcast, c_allgather, c_reducescatter, barrier, c_sync_calc_stream, "
            "c_sync_comm_stream, c_identity");
