"""Which tier each test belongs to, by what it costs (README, *Tests by tier*). One place, so no test file changes.

- `unit`: starts no process and reaches no server; the whole tier runs in under a minute. A unit test that starts
  a process fails (tests/fixtures/process_guard.py).
- `integration`: starts processes that are not training (ruff, mypy, a wheel build, CLI runs, the SDK v2 oracle),
  talks to the session's moto server, or computes for seconds in the test process (COSTLY_IN_PROCESS).
- `slow`: trains, launches torchrun or local jobs, or drives Chromium (`browser` as well).

A test is `slow` when it or its module says so or it uses a fixture of SLOW_FIXTURES/BROWSER_FIXTURES;
else `integration` when it says so, uses a fixture of INTEGRATION_FIXTURES or is listed in
INTEGRATION_TESTS; else `unit`.
"""

from __future__ import annotations

import pytest

# fixtures that train a model, launch torchrun or drive Chromium: a test using one is slow
SLOW_FIXTURES = {
    "sentiment_model", "sentiment_archive",  # trains the session's tiny RoBERTa
    "_launches", "world2", "world4",  # tests/modelparallel: torchrun launches
    "profiled_jobs",  # tests/profiler: profiled local jobs
    "runs",  # tests/profiler/test_torch_capture.py: Trainer runs under torch.profiler
}
BROWSER_FIXTURES = {"page", "browser_context_factory"}

# fixtures that reach a server (the session's moto server, the fault proxy in front of it) or start the v2 oracle
INTEGRATION_FIXTURES = {"moto_server", "sagemaker_fakes", "endpoint_fakes", "sdk_v2", "sdk_v2_alone", "fault_proxy",
                        "bucket"}

# tests that start a process that is not training (CLI runs, ruff/mypy, a wheel build, the oracles, forked decoders,
# servers in processes), found with `--process-log`: a module, or one test of it (all its parameters)
STARTS_PROCESSES = (
    "tests/foundation/test_bench.py",
    "tests/foundation/test_cli_validate.py",
    "tests/foundation/test_imports.py",
    "tests/foundation/test_installed_names.py",
    "tests/foundation/test_lanes.py::test_the_command_fails_when_one_lane_fails_and_shows_each_lanes_lines",
    "tests/foundation/test_lanes.py::test_a_lane_that_selects_nothing_fails_the_command",
    "tests/foundation/test_job_file_hostile.py::test_alias_bomb_is_refused_before_anything_is_built",
    "tests/foundation/test_job_file_hostile.py::test_python_api_bounds_its_work_before_serialising",
    "tests/foundation/test_lint.py::test_mypy_finds_no_type_error_in_the_library",
    "tests/foundation/test_lint.py::test_ruff_finds_nothing_in_the_library",
    "tests/foundation/test_parity.py",
    "tests/foundation/test_repository_stands_alone.py",
    "tests/foundation/test_serializers.py::test_importing_the_serializers_loads_no_numpy",
    "tests/foundation/test_text_that_travels.py::test_validate_refuses_text_that_cannot_travel_naming_the_field",
    "tests/foundation/test_text_that_travels.py::test_validate_warns_where_the_toolkits_shell_would_expand_a_value",
    "tests/local/test_files_and_modes.py::test_a_full_disk_leaves_no_truncated_archive_under_its_name",
    "tests/local/test_files_and_modes.py::test_a_full_home_refuses_the_job_in_one_line_naming_the_file",
    "tests/local/test_files_and_modes.py::test_a_read_only_home_is_one_line_naming_sagelaunch_home",
    "tests/local/test_files_and_modes.py::test_an_upload_staged_on_a_full_disk_puts_nothing_in_s3",
    "tests/local/test_files_and_modes.py::test_making_a_file_private_keeps_this_processs_locks_on_it",
    "tests/local/test_job_modules.py",
    "tests/local/test_lookup_and_messages.py::test_mistyped_local_name_without_aws_suggests_the_local_job_and_how_to_reach_sagemaker",
    "tests/local/test_registry.py::test_concurrent_writers_lose_no_update",
    "tests/local/test_requirements_errors.py::test_a_package_pip_cannot_build_is_named",
    "tests/local/test_settings_local.py::test_a_git_config_error_says_what_failed_without_credentials",
    "tests/local/test_sourcedir.py::test_cli_fit_with_a_loop_in_source_dir_prints_one_line",
    "tests/local/test_toolkit_entry_point.py",
    "tests/local/test_toolkit_environment.py",
    "tests/local/test_training_toolkit.py::test_a_requirement_that_cannot_be_installed_is_named",
    "tests/local/test_training_toolkit.py::test_an_unclosed_quote_is_refused_as_the_shell_fails_on_it",
    "tests/local/test_training_toolkit.py::test_requirements_install_into_a_cache_folder_reused_for_the_same_file",
    "tests/local/test_training_toolkit.py::test_the_command_line_is_what_the_toolkits_shell_makes_of_it",
    "tests/modelparallel/test_client_free.py",
    "tests/modelparallel/test_trainer_path.py",
    "tests/parity_v2/test_images.py",
    "tests/parity_v2/test_not_mirrored.py::test_each_refused_name_exists_in_sdk_v2",
    "tests/parity_v2/test_swap_rule.py::test_every_mirrored_name_exists_at_the_same_path_in_sdk_v2",
    "tests/parity_v2/test_swap_rule.py::test_the_mirror_is_as_light_as_estimators",
    "tests/planner/test_planner.py::test_the_planner_imports_without_torch",
    "tests/profiler/test_bad_input.py::test_a_gzip_bomb_is_stopped_before_it_takes_the_memory",
    "tests/profiler/test_bad_input.py::test_fast_path_and_typer_agree",
    "tests/profiler/test_bad_input.py::test_fast_path_imports_only_what_the_analysis_uses",
    "tests/profiler/test_bad_input.py::test_help_names_flags_without_type_noise",
    "tests/profiler/test_bad_input.py::test_ranks_that_disagree",
    "tests/profiler/test_bad_input.py::test_real_process_prints_one_json_object_or_one_error_line",
    "tests/profiler/test_benchmarks_run.py",
    "tests/profiler/test_capture.py",
    "tests/profiler/test_findings.py::test_cli_text_and_json_list_findings",
    "tests/profiler/test_job_settings.py::test_a_folder_of_many_ranks_analysed_in_workers_reads_them_too",
    "tests/profiler/test_job_settings.py::test_no_or_unusable_smp_parameters_record_nothing_and_training_goes_on",
    "tests/profiler/test_job_settings.py::test_pipeline_bubble_from_the_profile_without_flags",
    "tests/profiler/test_job_settings.py::test_the_in_job_profiler_records_the_smp_settings",
    "tests/profiler/test_job_settings.py::test_without_recorded_settings_the_flags_fill_in",
    "tests/profiler/test_monitor.py",
    "tests/profiler/test_one_source.py::test_cli_json_and_report_agree",
    "tests/profiler/test_output_process.py",
    "tests/profiler/test_parallel_analysis.py",
    "tests/profiler/test_profile_diff.py::test_a_path_that_is_not_a_profile_is_one_line",
    "tests/profiler/test_profile_diff.py::test_cli_says_the_input_wait_is_what_got_slower",
    "tests/profiler/test_records.py::test_the_cli_json_is_the_records_json",
    "tests/profiler/test_trace_chunks.py::test_a_bad_event_in_a_later_chunk_is_reported_as_by_the_whole_decode",
    "tests/profiler/test_trace_chunks.py::test_a_worker_that_dies_is_reported_as_lost",
    "tests/profiler/test_trace_chunks.py::test_chunked_decode_equals_whole_decode",
    "tests/profiler/test_trace_chunks.py::test_chunks_keep_what_the_whole_decode_keeps",
    "tests/profiler/test_trace_chunks.py::test_cuts_inside_strings_or_nested_objects_fall_back_to_the_whole_decode",
    "tests/profiler/test_trace_chunks.py::test_default_chunking_of_a_big_trace_equals_whole",
    "tests/profiler/test_trace_chunks.py::test_fork_map_keeps_order_and_raises_what_a_worker_raised",
    "tests/profiler_ui/test_server_hostile.py::test_a_second_server_on_a_busy_port_says_so_in_one_line",
    "tests/profiler_ui/test_ui_command.py",
    "tests/security/test_archives.py::test_a_sparse_member_is_refused_before_its_holes_are_written",
    "tests/security/test_archives.py::test_cli_package_prints_one_error_line_naming_the_member",
    "tests/security/test_archives.py::test_cli_package_refuses_a_sparse_member_instead_of_gzipping_its_holes",
    "tests/security/test_packing.py::test_a_failed_git_config_fit_leaves_no_clone",
    "tests/security/test_packing.py::test_a_symlinked_git_folder_pointing_home_is_refused_and_the_clone_removed",
    "tests/security/test_packing.py::test_a_token_authenticates_the_clone_without_reaching_the_disk",
    "tests/sentiment/test_local_endpoint_lifetime.py::test_a_detached_endpoint_outlives_its_owner_and_is_listed_and_stopped_by_the_cli",
    "tests/sentiment/test_local_endpoint_lifetime.py::test_a_folder_that_is_no_model_is_an_error_not_the_default_handler",
    "tests/sentiment/test_local_endpoint_lifetime.py::test_a_name_already_served_is_refused",
    "tests/sentiment/test_local_endpoint_lifetime.py::test_a_relative_model_folder_is_resolved_against_the_callers_directory",
    "tests/sentiment/test_local_endpoint_lifetime.py::test_session_delete_endpoint_stops_a_detached_endpoint_of_another_process",
    "tests/sentiment/test_local_endpoint_lifetime.py::test_the_server_ends_with_its_owner",
    "tests/sentiment/test_local_server_hostile.py",
    "tests/sentiment/test_next_commands.py::test_profile_analyze_as_printed_works_in_a_fresh_shell",
    "tests/sentiment/test_v2_serving.py::test_a_foreign_serializer_is_used_through_its_attributes",
    "tests/sentiment/test_v2_serving.py::test_a_program_without_model_fn_gets_the_toolkits_default_which_names_what_it_needs",
    "tests/sentiment/test_v2_serving.py::test_each_serializer_sends_its_content_type_and_accept",
    "tests/sentiment/test_v2_serving.py::test_pytorch_default_is_numpy_in_and_out_as_v2s_pytorch_predictor",
    "tests/sentiment/test_v2_serving.py::test_what_cannot_be_served_here_is_refused_by_name",
)
# tests that start none but compute for seconds (models run forward and backward, 1,500 hypothesis examples, a 50 MB
# log): they would take the unit tier past its minute
COSTLY_IN_PROCESS = (
    "tests/foundation/test_hypothesis.py",
    "tests/modelparallel/test_offload.py",
    "tests/modelparallel/test_api_units.py::test_tensor_parallel_plans_and_divisibility",
    "tests/modelparallel/test_smp_init.py::test_the_distributed_transformer_path_starts_where_hugging_faces_init_does",
    "tests/planner/test_activations.py",
    "tests/local/test_large_logs.py",
    "tests/sentiment/test_dataset_and_script.py::test_shipped_dataset_is_not_trivially_separable",
)
INTEGRATION_TESTS = STARTS_PROCESSES + COSTLY_IN_PROCESS


def _listed(nodeid: str, entries: tuple[str, ...]) -> bool:
    """The test, its module or the test without its parameters is an entry."""
    module, _, rest = nodeid.partition("::")
    return module in entries or nodeid in entries or f"{module}::{rest.partition('[')[0]}" in entries


def tier_of(item: pytest.Item) -> str:
    used = set(getattr(item, "fixturenames", ()))
    if item.get_closest_marker("slow") is not None or used & (SLOW_FIXTURES | BROWSER_FIXTURES):
        return "slow"
    if (item.get_closest_marker("integration") is not None or used & INTEGRATION_FIXTURES
            or _listed(item.nodeid, INTEGRATION_TESTS)):
        return "integration"
    return "unit"


def mark_tiers(items: list[pytest.Item]) -> None:
    for item in items:
        if set(getattr(item, "fixturenames", ())) & BROWSER_FIXTURES:
            item.add_marker(pytest.mark.browser)
        tier = tier_of(item)
        if item.get_closest_marker(tier) is None:
            item.add_marker(getattr(pytest.mark, tier))
