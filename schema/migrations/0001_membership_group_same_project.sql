ALTER TABLE "member_groups" ADD CONSTRAINT "member_groups_id_project_id_key" UNIQUE("id","project_id");--> statement-breakpoint
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_group_same_project_fk" FOREIGN KEY ("group_id","project_id") REFERENCES "public"."member_groups"("id","project_id") ON DELETE no action ON UPDATE no action;
