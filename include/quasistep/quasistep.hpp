// quasistep: batched planar quasistatic contact simulation. This header brings in the whole
// public API (docs/api.md): scenes, one world's stepper, the batch engine, rollouts, Monte
// Carlo studies and the complementarity solvers.
#pragma once

#include "quasistep/version.hpp"

#include "quasistep/kernels/lemke.hpp"
#include "quasistep/kernels/status.hpp"
#include "quasistep/kernels/ucp.hpp"

#include "quasistep/core/model.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/step_certificate.hpp"
#include "quasistep/core/stepper.hpp"
#include "quasistep/core/world_params.hpp"
#include "quasistep/core/commands_csv.hpp"
#include "quasistep/core/derivatives.hpp"
#include "quasistep/core/formulation_table.hpp"
#include "quasistep/core/lcp_problem_file.hpp"
#include "quasistep/core/output_file.hpp"
#include "quasistep/core/ucp_problem_file.hpp"

#include "quasistep/batch/batch_stepper.hpp"
#include "quasistep/batch/bundled.hpp"
#include "quasistep/batch/ilqr.hpp"
#include "quasistep/batch/mc_csv.hpp"
#include "quasistep/batch/mc_summary.hpp"
#include "quasistep/batch/monte_carlo.hpp"
#include "quasistep/batch/rollout.hpp"
#include "quasistep/batch/world_batch.hpp"
