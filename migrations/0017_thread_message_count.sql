-- The length of a thread's message_history, kept next to it so that the thread actor's lock
-- statements (every inbox POST, every seal) and the runs' history_start/history_end read a
-- number instead of the whole TOASTed history, and thread.changed stream events carry the
-- count instead of the array (clients GET the thread for the history).
-- A trigger keeps the column equal to jsonb_array_length(message_history) on every insert and
-- every update that sets the history, whoever writes it: the count can never drift from the
-- array. The threads store's updates that do not set message_history do not fire it.
alter table threads add column message_count integer not null default 0;
update threads set message_count = jsonb_array_length(message_history) where message_history <> '[]'::jsonb;

create function threads_message_count() returns trigger language plpgsql as $$
begin
  new.message_count := jsonb_array_length(new.message_history);
  return new;
end
$$;

create trigger threads_message_count before insert or update of message_history on threads
  for each row execute function threads_message_count();
