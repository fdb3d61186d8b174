# Sourced by the wordpress hooks that deal with the database (not a hook itself).
# $db holds the settings in use, on one line: unit host port database user password.
db=$state/db

# db_get <unit> reads the settings <unit> published on the hook's relation.
db_get() {
	host=$(relation-get host "$1")
	port=$(relation-get port "$1")
	database=$(relation-get database "$1")
	user=$(relation-get user "$1")
	password=$(relation-get password "$1")
}

# db_complete says whether db_get found all that wordpress needs.
db_complete() {
	[ -n "$host" ] && [ -n "$port" ] && [ -n "$database" ] && [ -n "$user" ] && [ -n "$password" ]
}

# db_save <unit> keeps what db_get read from <unit>; db_load reads it back.
db_save() {
	mkdir -p "$state"
	echo "$1 $host $port $database $user $password" >"$db"
}
db_load() {
	read -r db_unit host port database user password <"$db"
}

serve() {
	status-set active "serving with database $host:$port"
	open-port 80/tcp
}

no_db() {
	rm -f "$db"
	status-set blocked "waiting for database"
	close-port 80/tcp
}
