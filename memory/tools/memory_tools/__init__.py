"""The memory.* tools a model calls: profile facts, notes, lessons, procedures and memory://
reads. Each runs the service or selector of the matching REST endpoint and returns what that
endpoint returns, through the same output serializers.

Where a call runs comes from its conversation (`ToolContext`), never from the arguments:

- the subject is the conversation's; a note stored here gets the conversation (so its scope
  and working_dir); a fact is subject-wide unless `project_only` asks for the conversation's
  scope;
- what a tool reads or forgets is what the conversation can see: unscoped items and items of
  its own scope (notes, facts), the subject-wide memory:// documents and its project's;
- a note or fact given a consent `category` goes through the consent routing reflection uses
  (`memory_candidate_route`): stored under "allow", queued for the person under "ask" (the
  default of every sensitive category), dropped under "deny". The result's `status` says which.
"""

from memory.tools.memory_tools import distilled, documents, notes, profile  # noqa: F401  (they register)
