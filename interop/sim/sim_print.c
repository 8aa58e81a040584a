/* sim_print: the verbs' shared headings (see sim_print.h). */
#include "interop/sim/sim_print.h"

#include <stdio.h>

void io_sim_json_point(uint32_t servers, uint32_t clients, uint32_t min_aperture,
                       const char *list) {
  printf("\"servers\":%u,\"clients\":%u,\"min_aperture\":%u,\"%s\":[", servers, clients,
         min_aperture, list != NULL ? list : "modes");
}

void io_sim_json_grid(uint32_t servers_lo, uint32_t servers_hi, uint32_t step,
                      uint32_t clients_lo, uint32_t clients_hi, uint32_t positions) {
  printf("\"grid\":{\"servers\":[%u,%u],\"step\":%u,\"clients\":[%u,%u],"
         "\"positions\":%u,\"modes\":[",
         servers_lo, servers_hi, step, clients_lo, clients_hi, positions);
}

void io_sim_text_point(uint32_t servers, uint32_t clients, uint32_t min_aperture) {
  printf("%u clients, %u servers, min aperture %u.", clients, servers, min_aperture);
}
