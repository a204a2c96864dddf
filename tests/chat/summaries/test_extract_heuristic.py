from chat.summaries.blocks import failure_parse, parse_block, workflow_parse
from chat.summaries.extract_heuristic import NO_FIX, heuristic_extract
from chat.summaries.turns import reaction
from tests.chat.summaries.conversations import CI_PROJECT, SMALL_TALK, note, rows


def extract(turns, notes=()):
    return heuristic_extract(messages=rows(turns), notes=list(notes))


def test_a_coding_conversation_yields_every_kind_of_item():
    result = extract(CI_PROJECT)

    s = result.sections
    assert result.method == "heuristic"
    assert "The user chose GitHub Actions from the options the assistant listed." in s["decisions"]
    assert any("stick with PostgreSQL for the audit log" in d for d in s["decisions"])
    assert any("under 10 minutes" in c and "Python 3.11" in c for c in s["constraints"])
    assert any("cannot add another database" in c for c in s["constraints"])
    problem, fix = failure_parse(s["failures"][0])
    assert "OperationalError" in problem
    assert fix.startswith("Add a postgres service to the job")
    assert workflow_parse(s["workflows"][0]) == (
        "cut-release",
        [
            "Run the full test suite.",
            "Bump the version in pyproject.toml.",
            "Tag the commit.",
            "Push the tag.",
        ],
    )
    assert {"GitHub Actions", "PostgreSQL", "Django"} <= set(s["tools"])
    assert s["preferences"] == [
        "The user asks the assistant to always show the user the full YAML file rather than fragments."
    ]
    assert "The user still needs to decide whether to cache the pip downloads on CI." in s["open_questions"]
    assert "Should the user use actions/cache for that?" in s["open_questions"]


def test_the_block_round_trips_through_the_parser():
    result = extract(CI_PROJECT)

    assert parse_block(result.raw_memory) == result.sections


def test_title_and_synopsis_name_the_topic_and_what_was_settled():
    result = extract(CI_PROJECT)

    assert result.title == "Set up continuous integration for my Django invoicing"
    assert 3 <= len(result.title.split()) <= 8
    assert result.synopsis.startswith("Topic: Set up continuous integration for the user's Django invoicing.")
    assert "2 decisions" in result.synopsis
    assert "Left open: The user still needs to decide" in result.synopsis


def test_small_talk_yields_nothing():
    result = extract(SMALL_TALK)

    assert result.empty
    assert result.title == "How was your weekend"


def test_an_assistant_suggestion_the_user_rejected_is_no_decision():
    result = extract(CI_PROJECT)

    assert not any("MongoDB" in item for items in result.sections.values() for item in items)


def test_an_assistant_suggestion_the_user_accepted_is_a_decision():
    result = extract(
        [
            ("user", "Our job queue keeps losing tasks when the worker restarts."),
            (
                "assistant",
                "I would recommend enabling acks_late on the Celery tasks so a task is acked after it runs.",
            ),
            ("user", "Sounds good, let's do that."),
        ]
    )

    assert result.sections["decisions"] == [
        "The assistant would recommend enabling acks_late on the Celery tasks so a task is acked after it runs."
    ]


def test_an_unanswered_proposal_and_a_hedge_are_no_decisions():
    result = extract(
        [
            ("user", "Maybe we should switch to Poetry at some point?"),
            ("assistant", "You could use uv instead, it is much faster."),
            ("user", "Hmm, I'll think about it."),
        ]
    )

    assert result.sections["decisions"] == []


def test_a_suggestion_that_did_not_work_is_no_fix_and_the_one_that_did_is():
    result = extract(
        [
            ("user", "npm install crashes with EACCES: permission denied on /usr/lib/node_modules."),
            ("assistant", "Try running it with sudo."),
            ("user", "Still getting the same error."),
            (
                "assistant",
                "Set a user-level prefix: run `npm config set prefix ~/.npm-global` and add it to PATH.",
            ),
            ("user", "That fixed it, thanks!"),
        ]
    )

    assert len(result.sections["failures"]) == 1
    problem, fix = failure_parse(result.sections["failures"][0])
    assert "EACCES" in problem
    assert fix.startswith("Set a user-level prefix")
    assert "`npm config set prefix ~/.npm-global`" in result.sections["tools"]


def test_a_fix_the_user_describes_is_paired_with_the_failure():
    result = extract(
        [
            ("user", "The nightly backup script fails with exit code 2 since Monday."),
            ("assistant", "Can you share the log?"),
            (
                "user",
                "Never mind, the problem was an expired SSH key on the backup host; I rotated it and it runs again.",
            ),
        ]
    )

    problem, fix = failure_parse(result.sections["failures"][0])
    assert "exit code 2" in problem
    assert "expired SSH key" in fix


def test_a_failure_nobody_fixed_says_so():
    result = extract([("user", "The docs build fails on Windows with a UnicodeDecodeError.")])

    assert result.sections["failures"] == [
        f"The docs build fails on Windows with a UnicodeDecodeError. Fix: {NO_FIX}"
    ]


def test_numbered_steps_the_user_gives_are_a_workflow():
    result = extract(
        [
            (
                "user",
                "Here is how we deploy the docs site:\n1. Build with `mkdocs build --strict`\n"
                "2. Upload the site folder to the bucket\n3. Invalidate the CDN cache",
            )
        ]
    )

    name, steps = workflow_parse(result.sections["workflows"][0])
    assert name == "deploy-docs-site"
    assert steps == [
        "Build with `mkdocs build --strict`.",
        "Upload the site folder to the bucket.",
        "Invalidate the CDN cache.",
    ]


def test_steps_the_assistant_lists_count_only_once_the_user_takes_them_up():
    steps = "To rotate the API token:\n1. Create a new token in the console\n2. Update the secret in the vault\n3. Restart the workers"
    accepted = extract(
        [("user", "How do I rotate the token?"), ("assistant", steps), ("user", "Perfect, that worked.")]
    )
    ignored = extract(
        [("user", "How do I rotate the token?"), ("assistant", steps), ("user", "No, we don't use a vault.")]
    )

    assert workflow_parse(accepted.sections["workflows"][0])[0] == "rotate-api-token"
    assert ignored.sections["workflows"] == []


def test_relative_dates_are_resolved_against_the_message_time():
    result = extract([("user", "We must finish the migration by Friday.")])

    assert result.sections["constraints"] == ["We must finish the migration by Friday (2025-03-07)."]


def test_notes_of_the_conversation_count_by_their_kind():
    result = extract(
        SMALL_TALK,
        notes=[
            note("The team decided to move the staging server to Hetzner.", tags=["decision", "tech"]),
            note("Renew the TLS certificate before 1 April 2025.", tags=["plan"]),
            note("Releases are never cut on a Friday.", tags=[]),
        ],
    )

    assert result.sections["decisions"] == ["The team decided to move the staging server to Hetzner."]
    assert result.sections["open_questions"] == ["Renew the TLS certificate before 1 April 2025."]
    assert result.sections["constraints"] == ["Releases are never cut on a Friday."]


def test_the_same_point_made_twice_is_kept_once():
    result = extract(
        [
            ("user", "We'll use SQLite for the test database."),
            ("assistant", "Noted."),
            ("user", "So yes, we will use SQLite for the test database."),
        ]
    )

    assert len(result.sections["decisions"]) == 1


def test_reactions_are_read_from_the_opening_of_the_reply():
    assert reaction("That worked, thanks!") == "worked"
    assert reaction("Nope, still failing with the same error.") == "failed"
    assert reaction("No, I'd rather keep Redis.") == "rejected"
    assert reaction("Yes, let's do that.") == "accepted"
    assert reaction("What does acks_late do?") is None


def test_a_limit_the_user_sets_is_a_constraint_and_leaving_is_not():
    result = extract(
        [
            (
                "user",
                "I'm writing a CLI in Rust that syncs notes to S3. I have to keep the binary under 5 MB.",
            ),
            ("assistant", "Understood."),
            ("user", "I have to go now, my train is here."),
        ]
    )

    assert result.title == "Writing a CLI in Rust"
    assert result.sections["constraints"] == ["The user has to keep the binary under 5 MB."]


# --- mechanisms of the wider rules (conversations written for these tests) -------------------


def test_the_fix_is_what_the_user_says_they_did_when_it_worked():
    result = extract(
        [
            ("user", "the greenhouse fan keeps failing, it trips the breaker every morning around 7."),
            ("assistant", "Probably inrush current. A soft starter or a slow-blow fuse usually helps."),
            ("user", "swapped in a slow-blow fuse on the fan circuit, that did the trick. thanks"),
        ]
    )
    [failure] = result.sections["failures"]
    problem, fix = failure_parse(failure)
    assert "breaker" in problem
    assert "slow-blow fuse" in fix and "did the trick" not in fix


def test_a_procedure_the_assistant_recalls_inline_is_a_workflow_named_from_the_users_words():
    result = extract(
        [
            ("user", "new batch of sourdough today, doing the levain the usual way."),
            (
                "assistant",
                "Same as always: feed the starter at night, mix the levain in the morning, "
                "wait until it doubles, then fold it into the dough.",
            ),
            ("user", "it doubled by noon."),
        ]
    )
    [item] = result.sections["workflows"]
    name, steps = workflow_parse(item)
    assert name == "levain"
    assert steps[0].startswith("Feed the starter") and len(steps) == 4


def test_a_step_list_the_user_turns_down_is_no_workflow():
    steps = "A routine for the move:\n1. Book the van\n2. Pack the kitchen last\n3. Label every box"
    result = extract(
        [
            ("user", "how do I plan the move?"),
            ("assistant", steps),
            ("user", "no, we are hiring movers instead."),
        ]
    )
    assert result.sections["workflows"] == []


def test_choices_against_an_alternative_and_things_that_stay_are_decisions_and_stopgaps_are_not():
    result = extract(
        [
            ("user", "for the club newsletter we print it on paper, no email list."),
            ("user", "the meeting night stays."),
            ("user", "zoom for now, I will ask the others."),
        ]
    )
    decisions = " ".join(result.sections["decisions"]).lower()
    assert "no email list" in decisions
    assert "meeting night stays" in decisions
    assert "zoom" not in decisions


def test_a_sentence_that_states_an_access_code_or_wifi_password_is_not_copied():
    result = extract(
        [
            ("user", "the cabin has a hard limit of 6 guests, the owner will not allow more."),
            ("user", "the cabin wifi is Pine-Ridge-42 and the key safe code is 9043."),
        ]
    )
    text = result.raw_memory
    assert "6 guests" in text
    assert "Pine-Ridge-42" not in text and "9043" not in text


def test_a_report_of_following_a_plan_counts_as_taking_it_up():
    assert reaction("did exactly that for the spare bedroom, looks great.") in ("accepted", "worked")
    assert reaction("followed the steps, the printer is online again.") in ("accepted", "worked")
