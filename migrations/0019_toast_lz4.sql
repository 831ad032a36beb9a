-- The two values rewritten on every run are compressed with lz4 instead of pglz where the server
-- was built with lz4 (PostgreSQL ≥ 14 lists it in default_toast_compression's values): the
-- thread's message_history, rewritten whole by every seal (`message_history || $new`, so its
-- compression cost grows with the conversation), and the inline checkpoint state written by
-- every step commit. lz4 compresses several times faster for about the same size. Values
-- already stored keep their compression until rewritten; a server without lz4 keeps pglz.
-- Measured: bench/RESULTS.md, session 9.
do $$
begin
  if exists (select 1 from pg_settings where name = 'default_toast_compression' and 'lz4' = any(enumvals)) then
    alter table threads alter column message_history set compression lz4;
    alter table run_checkpoints alter column state set compression lz4;
  end if;
end
$$;
