-- A notice nobody could be sent. When an endpoint of a district with no
-- contacts was paused for failing, disabled by a 410, resumed or passed its
-- dead-letter threshold, no notice was recorded at all: the Notifications page
-- said "No notifications yet" while the district had not been told. Such an
-- event now records one notice with channel 'none', no recipient and status
-- 'unaddressed' (what would have been said, kept to read), which the sender
-- never claims (it claims 'pending' only).
--
-- Locks: each DROP/ADD CONSTRAINT takes ACCESS EXCLUSIVE on notifications for a
-- catalog change only (the new checks are added NOT VALID); VALIDATE then reads
-- every row under SHARE UPDATE EXCLUSIVE, which does not block reads or writes.
-- No row changes.
ALTER TABLE notifications
  DROP CONSTRAINT notifications_channel_check,
  ADD CONSTRAINT notifications_channel_check CHECK (channel IN ('email', 'webhook', 'none')) NOT VALID,
  DROP CONSTRAINT notifications_status_check,
  ADD CONSTRAINT notifications_status_check CHECK (status IN ('pending', 'sent', 'failed', 'suppressed', 'unaddressed')) NOT VALID,
  ADD CONSTRAINT notifications_unaddressed CHECK ((channel = 'none') = (status = 'unaddressed')) NOT VALID;
ALTER TABLE notifications VALIDATE CONSTRAINT notifications_channel_check;
ALTER TABLE notifications VALIDATE CONSTRAINT notifications_status_check;
ALTER TABLE notifications VALIDATE CONSTRAINT notifications_unaddressed;
