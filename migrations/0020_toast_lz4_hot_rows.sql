-- lz4 (as migration 0019) for the large values written on every request and run: the
-- Idempotency-Key record's response (an inbox POST's answer is ~2 KB: past the TOAST threshold,
-- so every POST compressed it with pglz), the run's configuration and input, its output, the
-- inbox entry's payload, a run item's content and the outbox's event payload. lz4 compresses
-- several times faster than pglz for about the same size. Where the server has no lz4 nothing
-- changes; values already stored keep their compression until rewritten.
-- Measured: bench/RESULTS.md, session 10.
do $$
begin
  if exists (select 1 from pg_settings where name = 'default_toast_compression' and 'lz4' = any(enumvals)) then
    alter table idempotency_keys alter column response_body set compression lz4;
    alter table runs alter column config set compression lz4;
    alter table runs alter column input set compression lz4;
    alter table runs alter column output set compression lz4;
    alter table inbox_entries alter column payload set compression lz4;
    alter table run_items alter column content set compression lz4;
    alter table outbox alter column payload set compression lz4;
  end if;
end
$$;
