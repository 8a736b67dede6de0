"""Canvas and CanvasNode join the index (they were the canvases app's): state only. Their tables
(canvases_canvas, canvases_canvasnode) stay as they are, named by db_table; canvases 0005 points
its keys at them here and forgets its own copies."""

import django.db.models.deletion
from django.db import migrations, models

import memviz.fields


class Migration(migrations.Migration):

    dependencies = [
        ('agent_sessions', '0008_share_links'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Canvas',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('filename', memviz.fields.NulSafeCharField(max_length=500)),
                        ('number', models.IntegerField(null=True)),
                        ('label', memviz.fields.NulSafeCharField(blank=True, default='', max_length=500)),
                        ('task_goal', memviz.fields.NulSafeTextField(blank=True, default='')),
                        ('progress', models.IntegerField(null=True)),
                        ('created_time', memviz.fields.NulSafeCharField(blank=True, default='', max_length=64)),
                        ('updated_time', memviz.fields.NulSafeCharField(blank=True, default='', max_length=64)),
                        ('content_hash', memviz.fields.NulSafeCharField(max_length=64)),
                        ('text', memviz.fields.NulSafeTextField(blank=True, default='')),
                        ('size', models.IntegerField(default=0)),
                        ('mtime_ns', models.BigIntegerField(default=0)),
                        ('node_count', models.IntegerField(default=0)),
                        ('edge_count', models.IntegerField(default=0)),
                        ('status_counts', memviz.fields.NulSafeJSONField(default=dict)),
                        ('problems', memviz.fields.NulSafeJSONField(default=list)),
                        ('has_errors', models.BooleanField(default=False)),
                        ('agent', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='canvases', to='agent_sessions.agent')),
                    ],
                    options={
                        'db_table': 'canvases_canvas',
                        'ordering': ['agent', 'filename'],
                    },
                ),
                migrations.CreateModel(
                    name='CanvasNode',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('node_id', memviz.fields.NulSafeCharField(max_length=300)),
                        ('position', models.IntegerField(default=0)),
                        ('title', memviz.fields.NulSafeTextField(blank=True, default='')),
                        ('status', memviz.fields.NulSafeCharField(blank=True, default='', max_length=100)),
                        ('summary', memviz.fields.NulSafeTextField(blank=True, default='')),
                        ('timestamp', memviz.fields.NulSafeCharField(blank=True, default='', max_length=64)),
                        ('shape', memviz.fields.NulSafeCharField(blank=True, default='', max_length=30)),
                        ('subgraph', memviz.fields.NulSafeCharField(blank=True, default='', max_length=300)),
                        ('agent', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='canvas_nodes', to='agent_sessions.agent')),
                        ('canvas', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='nodes', to='agent_sessions.canvas')),
                    ],
                    options={
                        'db_table': 'canvases_canvasnode',
                        'ordering': ['canvas', 'position'],
                    },
                ),
                migrations.AddConstraint(
                    model_name='canvas',
                    constraint=models.UniqueConstraint(fields=('agent', 'filename'), name='uniq_agent_canvas'),
                ),
                migrations.AddIndex(
                    model_name='canvasnode',
                    index=models.Index(fields=['agent', 'node_id'], name='node_agent_id'),
                ),
            ],
            database_operations=[],
        ),
    ]
