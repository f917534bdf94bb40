#!/bin/bash
# Submit the array and its merge. Slurm does not create the --output folder: a task whose
# logs/ is missing fails with no output anywhere, so both folders are made first.
set -euo pipefail
mkdir -p logs results
array=$(sbatch --parsable part.sbatch)
merge=$(sbatch --parsable --dependency="afterany:${array}" merge.sbatch)
echo "array ${array}, merge ${merge}"
