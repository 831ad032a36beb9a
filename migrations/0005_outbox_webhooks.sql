-- reserved: this migration is being written in this session.
select 1;
