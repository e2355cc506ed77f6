"""The Ray runner: ``runner.py`` (turns an optimized plan into stages and runs them),
``coordinator.py`` (schedules a stage's tasks over the engine workers, retries on worker loss),
``worker.py`` (the engine worker actor: one per node, runs plan fragments on the native executor)."""
